"""What dlc reads of its own ELF object files without loading them: the architecture they are
for (`e_machine`), the bytes of a defined symbol (the metadata strings of a module compiled
for another architecture, which this process cannot link) and the global symbols it defines
and references (to rename a model's symbols before linking several into one library).

Only 64-bit little-endian ELF (what LLVM emits for x86-64 and AArch64 Linux) is read.
"""

from __future__ import annotations

import struct

from dlc.runtime.library import ELF_MACHINES, LibraryError, elf_arch

_SHT_SYMTAB = 2
_SHT_NOBITS = 8
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")


def _check_elf64(code: bytes) -> None:
    if len(code) < 64 or code[:4] != b"\x7fELF":
        raise LibraryError("expected an ELF object file, found something else")
    if code[4] != 2 or code[5] != 1:
        raise LibraryError("expected a 64-bit little-endian ELF object file")


def object_arch(code: bytes) -> str:
    """The architecture of an ELF object file (its `e_machine`), by dlc's names."""
    _check_elf64(code)
    arch = elf_arch(code[:20])
    if arch is None:
        raise LibraryError(f"expected an ELF object of {' or '.join(ELF_MACHINES.values())}, "
                           f"found machine {int.from_bytes(code[18:20], 'little')}")
    return arch


def _sections(code: bytes) -> list[tuple[int, ...]]:
    offset, = struct.unpack_from("<Q", code, 0x28)
    size, count = struct.unpack_from("<HH", code, 0x3A)
    if size != _SECTION.size or offset + count * size > len(code):
        raise LibraryError("expected ELF section headers inside the file")
    return [_SECTION.unpack_from(code, offset + index * size) for index in range(count)]


def symbol_bytes(code: bytes, name: str) -> bytes | None:
    """The bytes of the symbol `name` defined in the relocatable object `code` (its section's
    bytes at the symbol's offset, as many as its size), or None where it is not defined there."""
    _check_elf64(code)
    sections = _sections(code)
    wanted = name.encode()
    for section in sections:
        if section[1] != _SHT_SYMTAB:
            continue
        strings = sections[section[6]]
        names = code[strings[4] : strings[4] + strings[5]]
        for start in range(section[4], section[4] + section[5], _SYMBOL.size):
            name_at, _, _, index, value, size = _SYMBOL.unpack_from(code, start)
            if names[name_at : names.index(b"\0", name_at)] != wanted:
                continue
            if index == 0 or index >= len(sections) or sections[index][1] == _SHT_NOBITS:
                return None
            where = sections[index][4] + value
            return code[where : where + size]
    return None


def string_symbol(code: bytes, name: str) -> str | None:
    """The NUL-terminated string the symbol `name` of `code` holds, or None where it is not
    defined there."""
    data = symbol_bytes(code, name)
    return None if data is None else data.split(b"\0", 1)[0].decode()


_STB_GLOBAL = 1


def global_symbols(code: bytes) -> tuple[frozenset[str], frozenset[str]]:
    """The names of the relocatable object `code`'s global symbols: (those it defines, those it
    references but does not define). Weak symbols (a library-wide default such as the thread
    count, which every unit may define) are in neither."""
    _check_elf64(code)
    sections = _sections(code)
    defined: set[str] = set()
    undefined: set[str] = set()
    for section in sections:
        if section[1] != _SHT_SYMTAB:
            continue
        strings = sections[section[6]]
        names = code[strings[4] : strings[4] + strings[5]]
        for start in range(section[4] + _SYMBOL.size, section[4] + section[5], _SYMBOL.size):
            name_at, info, _, index, _, _ = _SYMBOL.unpack_from(code, start)
            if info >> 4 != _STB_GLOBAL:
                continue
            name = names[name_at : names.index(b"\0", name_at)].decode()
            (undefined if index == 0 else defined).add(name)
    return frozenset(defined), frozenset(undefined)
