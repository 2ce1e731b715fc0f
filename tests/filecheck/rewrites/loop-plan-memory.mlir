// RUN: dlc-opt %s -p loop-plan-memory --split-input-file | filecheck %s
// RUN: dlc-opt %s -p 'loop-plan-memory{alignment=256}' --split-input-file | filecheck %s --check-prefix=ALIGN
// RUN: not dlc-opt %s -p 'loop-plan-memory{alignment=48}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: dlc-opt %s -p 'loop-plan-memory{workspace_argument=true}' --split-input-file | filecheck %s --check-prefix=TWIN
// RUN: dlc-opt %s -p 'loop-plan-memory{concat_in_place=false}' --split-input-file | filecheck %s --check-prefix=KEEP

// BAD: error: 'loop-plan-memory' expected an alignment that is a power of two, found 48

// A chain a -> b -> c -> out: %a is dead once %b is made, so %c reuses its bytes. The largest
// buffer (%b, 4096 bytes) is placed first at offset 0; %a (1024) and %c (2048) are each live
// with %b only, so both go right after it; the peak is 4096 + 2048.
// CHECK:       builtin.module attributes {dlc.workspace_bytes = 6144 : i64}
// CHECK-LABEL: func.func @chain_reuses_dead_buffers
// CHECK-SAME:    dlc.workspace_bytes = 6144 : i64
// CHECK-NEXT:    %[[WS:.*]] = loop.alloc global : memref<6144xi8>
// CHECK-NEXT:    %[[OFF_A:.*]] = arith.constant 4096 : index
// CHECK-NEXT:    %a = memref.view %[[WS]][%[[OFF_A]]][] : memref<6144xi8> to memref<256xf32>
// CHECK-NEXT:    func.call @k1(%x, %a)
// CHECK-NEXT:    %[[OFF_B:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %b = memref.view %[[WS]][%[[OFF_B]]][] : memref<6144xi8> to memref<1024xf32>
// CHECK-NEXT:    func.call @k2(%a, %b)
// CHECK-NEXT:    %[[OFF_C:.*]] = arith.constant 4096 : index
// CHECK-NEXT:    %c = memref.view %[[WS]][%[[OFF_C]]][] : memref<6144xi8> to memref<512xf32>
// CHECK-NEXT:    func.call @k3(%b, %c)
// CHECK-NEXT:    func.call @k4(%c, %out)
// CHECK-NOT:     loop.dealloc
// CHECK:         func.return
// ALIGN-LABEL: func.func @chain_reuses_dead_buffers
// ALIGN:         dlc.workspace_bytes = 6144 : i64
// With workspace_argument, the entry allocates the workspace and calls its twin, which takes
// the workspace as its last argument and runs the planned body; the twin is no entry function.
// TWIN-LABEL: func.func @chain_reuses_dead_buffers(%x: memref<16xf32>, %out: memref<16xf32>)
// TWIN-SAME:    dlc.num_outputs = 1 : i64
// TWIN-SAME:    dlc.workspace_bytes = 6144 : i64
// TWIN-NEXT:    %[[WS:.*]] = loop.alloc global : memref<6144xi8>
// TWIN-NEXT:    func.call @chain_reuses_dead_buffers_with_workspace(%x, %out, %[[WS]]) : (memref<16xf32>, memref<16xf32>, memref<6144xi8>) -> ()
// TWIN-NEXT:    func.return
// TWIN-LABEL: func.func @chain_reuses_dead_buffers_with_workspace(%x: memref<16xf32>, %out: memref<16xf32>, %workspace: memref<6144xi8>)
// TWIN-NOT:     dlc.num_outputs
// TWIN-NOT:     loop.alloc
// TWIN:         %[[OFF_A:.*]] = arith.constant 4096 : index
// TWIN-NEXT:    %a = memref.view %workspace[%[[OFF_A]]][] : memref<6144xi8> to memref<256xf32>
// TWIN-NEXT:    func.call @k1(%x, %a)
// TWIN:         func.call @k4(%c, %out)
// TWIN-NEXT:    func.return
func.func @chain_reuses_dead_buffers(%x: memref<16xf32>, %out: memref<16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %a = loop.alloc global : memref<256xf32>
  func.call @k1(%x, %a) : (memref<16xf32>, memref<256xf32>) -> ()
  %b = loop.alloc global : memref<1024xf32>
  func.call @k2(%a, %b) : (memref<256xf32>, memref<1024xf32>) -> ()
  loop.dealloc %a : memref<256xf32>
  %c = loop.alloc global : memref<512xf32>
  func.call @k3(%b, %c) : (memref<1024xf32>, memref<512xf32>) -> ()
  loop.dealloc %b : memref<1024xf32>
  func.call @k4(%c, %out) : (memref<512xf32>, memref<16xf32>) -> ()
  loop.dealloc %c : memref<512xf32>
  func.return
}
func.func private @k1(memref<16xf32>, memref<256xf32>)
func.func private @k2(memref<256xf32>, memref<1024xf32>)
func.func private @k3(memref<1024xf32>, memref<512xf32>)
func.func private @k4(memref<512xf32>, memref<16xf32>)

// -----

// Offsets are multiples of the alignment: %q (3 x i64 = 24 bytes, the larger) at 0, %p (5 x i8),
// live at the same time, at the next multiple of 64 (or 256); the peak is rounded up too. A
// buffer without dealloc lives until its last use.
// CHECK-LABEL: func.func @aligned_offsets
// CHECK-SAME:    dlc.workspace_bytes = 128 : i64
// CHECK:         arith.constant 0 : index
// CHECK-NEXT:    %q = memref.view {{.*}} to memref<3xi64>
// CHECK-NEXT:    arith.constant 64 : index
// CHECK-NEXT:    %p = memref.view {{.*}} to memref<5xi8>
// ALIGN-LABEL: func.func @aligned_offsets
// ALIGN-SAME:    dlc.workspace_bytes = 512 : i64
// ALIGN:         arith.constant 256 : index
// ALIGN-NEXT:    %p = memref.view
func.func @aligned_offsets(%x: memref<4xi8>, %out: memref<4xi8>) attributes {dlc.num_outputs = 1 : i64} {
  %q = loop.alloc global : memref<3xi64>
  %p = loop.alloc global : memref<5xi8>
  func.call @use(%x, %p, %q, %out) : (memref<4xi8>, memref<5xi8>, memref<3xi64>, memref<4xi8>) -> ()
  func.return
}
func.func private @use(memref<4xi8>, memref<5xi8>, memref<3xi64>, memref<4xi8>)

// -----

// A use inside a loop keeps the buffer alive until that loop ends: %t is read in the loop after
// %u is made, so they cannot share bytes.
// CHECK-LABEL: func.func @nested_use_extends_lifetime
// CHECK-SAME:    dlc.workspace_bytes = 128 : i64
func.func @nested_use_extends_lifetime(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = loop.alloc global : memref<4xf32>
  func.call @fill(%x, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  %u = loop.alloc global : memref<4xf32>
  func.call @fill(%x, %u) : (memref<4xf32>, memref<4xf32>) -> ()
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "sum" reads(%t, %u : memref<4xf32>, memref<4xf32>) writes(%out : memref<4xf32>) spatial ["i"] {
      %a = loop.load %t[%i] : memref<4xf32> -> f32
      %b = loop.load %u[%i] : memref<4xf32> -> f32
      %s = arith.addf %a, %b : f32
      loop.store %s, %out[%i] : f32 -> memref<4xf32>
    }
  }
  func.return
}
func.func private @fill(memref<4xf32>, memref<4xf32>)

// -----

// Kernels (private functions), local buffers, allocations inside loops and functions without
// dlc.num_outputs are not planned, and the module gets no attribute.
// CHECK-LABEL: func.func private @negative_kernel
// CHECK-NOT:     dlc.workspace_bytes
// CHECK:         loop.alloc global : memref<8xf32>
// CHECK-NOT:     memref.view
// CHECK-LABEL: func.func @negative_not_an_entry
// CHECK:         loop.alloc global : memref<8xf32>
// CHECK-LABEL: func.func @negative_local_and_nested
// CHECK:         loop.alloc local : memref<8xf32>
// CHECK:         loop.for
// CHECK-NEXT:      loop.alloc global : memref<8xf32>
// CHECK-NOT:   dlc.workspace_bytes
func.func private @negative_kernel(%x: memref<8xf32>, %out: memref<8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %t = loop.alloc global : memref<8xf32>
  func.return
}
func.func @negative_not_an_entry(%x: memref<8xf32>) {
  %t = loop.alloc global : memref<8xf32>
  func.return
}
func.func @negative_local_and_nested(%x: memref<8xf32>, %out: memref<8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = loop.alloc local : memref<8xf32>
  loop.for %i = %c0 to %c1 step %c1 axis "i" {
    %u = loop.alloc global : memref<8xf32>
    loop.dealloc %u : memref<8xf32>
  }
  func.return
}

// -----

// A planned function is not planned again.
// CHECK-LABEL: func.func @negative_already_planned
// CHECK-NEXT:    loop.alloc global : memref<64xi8>
// CHECK-NOT:     memref.view
func.func @negative_already_planned(%x: memref<8xf32>, %out: memref<8xf32>) attributes {dlc.num_outputs = 1 : i64, dlc.workspace_bytes = 64 : i64} {
  %workspace = loop.alloc global : memref<64xi8>
  func.return
}

// -----

// A concatenation along an axis with only 1s before it is done in place: each piece is a view
// at its offset inside the output (%a at 0, %b at 256), live as one buffer from %a's
// allocation to the output's last use; the concat call and its kernel go away. The RUN line
// with `concat_in_place=false` keeps them.
// CHECK-LABEL: func.func @concat_in_place
// CHECK-SAME:    dlc.workspace_bytes = 512 : i64
// CHECK-NEXT:    %[[WS:.*]] = loop.alloc global : memref<512xi8>
// CHECK-NEXT:    %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %a = memref.view %[[WS]][%[[OFF_A]]][] : memref<512xi8> to memref<1x16x4xf32>
// CHECK-NEXT:    func.call @produce(%x, %a)
// CHECK-NEXT:    %[[OFF_B:.*]] = arith.constant 256 : index
// CHECK-NEXT:    %b = memref.view %[[WS]][%[[OFF_B]]][] : memref<512xi8> to memref<1x16x4xf32>
// CHECK-NEXT:    func.call @produce(%a, %b)
// CHECK-NEXT:    %[[OFF_C:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %c = memref.view %[[WS]][%[[OFF_C]]][] : memref<512xi8> to memref<1x32x4xf32>
// CHECK-NEXT:    func.call @consume(%c, %out)
// CHECK-NEXT:    func.return
// CHECK-NOT:   func.func private @concat(
// KEEP-LABEL: func.func @concat_in_place
// KEEP-SAME:    dlc.workspace_bytes = 1024 : i64
// KEEP:         func.call @concat(%a, %b, %c)
// KEEP:       func.func private @concat(
func.func @concat_in_place(%x: memref<1x16x4xf32>, %out: memref<1x32x4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %a = loop.alloc global : memref<1x16x4xf32>
  func.call @produce(%x, %a) : (memref<1x16x4xf32>, memref<1x16x4xf32>) -> ()
  %b = loop.alloc global : memref<1x16x4xf32>
  func.call @produce(%a, %b) : (memref<1x16x4xf32>, memref<1x16x4xf32>) -> ()
  %c = loop.alloc global : memref<1x32x4xf32>
  func.call @concat(%a, %b, %c) : (memref<1x16x4xf32>, memref<1x16x4xf32>, memref<1x32x4xf32>) -> ()
  loop.dealloc %a : memref<1x16x4xf32>
  loop.dealloc %b : memref<1x16x4xf32>
  func.call @consume(%c, %out) : (memref<1x32x4xf32>, memref<1x32x4xf32>) -> ()
  loop.dealloc %c : memref<1x32x4xf32>
  func.return
}
func.func private @produce(memref<1x16x4xf32>, memref<1x16x4xf32>) attributes {dlc.num_outputs = 1 : i64}
func.func private @consume(memref<1x32x4xf32>, memref<1x32x4xf32>) attributes {dlc.num_outputs = 1 : i64}
func.func private @concat(memref<1x16x4xf32>, memref<1x16x4xf32>, memref<1x32x4xf32>) attributes {dlc.num_outputs = 1 : i64, dlc.concat_axis = 1 : i64}

// -----

// Not in place: a leading dim of 2 before the axis (each piece is two runs of the output), a
// piece at a byte offset that is no multiple of the alignment (48), a piece written twice, a
// piece read through a view.
// CHECK-LABEL: func.func @negative_concats
// CHECK:         func.call @concat2(%a, %b, %c)
// CHECK:         func.call @concat3(%d, %e, %f)
// CHECK:         func.call @concat1(%g, %h, %i)
// CHECK:         func.call @concat1(%j, %k, %l)
// CHECK:       func.func private @concat1(
func.func @negative_concats(%x: memref<1x16x4xf32>, %y: memref<1x3x4xf32>, %out: memref<1x32x4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %a = loop.alloc global : memref<2x16x4xf32>
  %b = loop.alloc global : memref<2x16x4xf32>
  %c = loop.alloc global : memref<2x32x4xf32>
  func.call @concat2(%a, %b, %c) : (memref<2x16x4xf32>, memref<2x16x4xf32>, memref<2x32x4xf32>) -> ()
  %d = loop.alloc global : memref<1x3x4xf32>
  func.call @produce3(%y, %d) : (memref<1x3x4xf32>, memref<1x3x4xf32>) -> ()
  %e = loop.alloc global : memref<1x3x4xf32>
  func.call @produce3(%y, %e) : (memref<1x3x4xf32>, memref<1x3x4xf32>) -> ()
  %f = loop.alloc global : memref<1x6x4xf32>
  func.call @concat3(%d, %e, %f) : (memref<1x3x4xf32>, memref<1x3x4xf32>, memref<1x6x4xf32>) -> ()
  %g = loop.alloc global : memref<1x16x4xf32>
  func.call @produce1(%x, %g) : (memref<1x16x4xf32>, memref<1x16x4xf32>) -> ()
  func.call @produce1(%x, %g) : (memref<1x16x4xf32>, memref<1x16x4xf32>) -> ()
  %h = loop.alloc global : memref<1x16x4xf32>
  func.call @produce1(%x, %h) : (memref<1x16x4xf32>, memref<1x16x4xf32>) -> ()
  %i = loop.alloc global : memref<1x32x4xf32>
  func.call @concat1(%g, %h, %i) : (memref<1x16x4xf32>, memref<1x16x4xf32>, memref<1x32x4xf32>) -> ()
  %j = loop.alloc global : memref<1x16x4xf32>
  func.call @produce1(%x, %j) : (memref<1x16x4xf32>, memref<1x16x4xf32>) -> ()
  %v = memref.collapse_shape %j [[0, 1, 2]] : memref<1x16x4xf32> into memref<64xf32>
  %k = loop.alloc global : memref<1x16x4xf32>
  func.call @produce1(%x, %k) : (memref<1x16x4xf32>, memref<1x16x4xf32>) -> ()
  %l = loop.alloc global : memref<1x32x4xf32>
  func.call @concat1(%j, %k, %l) : (memref<1x16x4xf32>, memref<1x16x4xf32>, memref<1x32x4xf32>) -> ()
  func.call @consume6(%c, %i, %l, %f, %v, %out) : (memref<2x32x4xf32>, memref<1x32x4xf32>, memref<1x32x4xf32>, memref<1x6x4xf32>, memref<64xf32>, memref<1x32x4xf32>) -> ()
  func.return
}
func.func private @produce1(memref<1x16x4xf32>, memref<1x16x4xf32>) attributes {dlc.num_outputs = 1 : i64}
func.func private @produce3(memref<1x3x4xf32>, memref<1x3x4xf32>) attributes {dlc.num_outputs = 1 : i64}
func.func private @consume6(memref<2x32x4xf32>, memref<1x32x4xf32>, memref<1x32x4xf32>, memref<1x6x4xf32>, memref<64xf32>, memref<1x32x4xf32>) attributes {dlc.num_outputs = 1 : i64}
func.func private @concat1(memref<1x16x4xf32>, memref<1x16x4xf32>, memref<1x32x4xf32>) attributes {dlc.num_outputs = 1 : i64, dlc.concat_axis = 1 : i64}
func.func private @concat2(memref<2x16x4xf32>, memref<2x16x4xf32>, memref<2x32x4xf32>) attributes {dlc.num_outputs = 1 : i64, dlc.concat_axis = 1 : i64}
func.func private @concat3(memref<1x3x4xf32>, memref<1x3x4xf32>, memref<1x6x4xf32>) attributes {dlc.num_outputs = 1 : i64, dlc.concat_axis = 1 : i64}

// -----

// Buffers of runtime rows (one size, their leading dim) get a workspace of their own, planned per
// row: a 16-byte row and an 8-byte row live at the same time, so the rows workspace is
// %n x 128 bytes (two aligned slots), each buffer a view at %n x its offset per row; the static
// buffer is planned as before. The rows workspace and the buffer of other rows (%m) are two
// buffers of runtime size, live together: two slots of the workspace of runtime sizes.
// CHECK-LABEL: func.func @runtime_rows
// CHECK:         %[[PEAK:.*]] = arith.constant 128 : index
// CHECK-NEXT:    %[[BYTES:.*]] = arith.muli %[[N:.*]], %[[PEAK]] : index
// CHECK:         %[[RT:.*]] = loop.alloc global sizes(%{{.*}}) : memref<?xi8>
// CHECK-NEXT:    %[[WS:.*]] = memref.view %[[RT]][%{{.*}}][%[[BYTES]]] : memref<?xi8> to memref<?xi8>
// CHECK:         %[[A:.*]] = memref.view %[[WS]][%{{.*}}][%[[N]]] : memref<?xi8> to memref<?x4xf32>
// CHECK:         %[[B:.*]] = memref.view %[[WS]][%{{.*}}][%[[N]]] : memref<?xi8> to memref<?x2xf32>
// CHECK:         %{{.*}} = memref.view %[[RT]][%{{.*}}][%m] : memref<?xi8> to memref<?x2xf32>
// CHECK-NOT:     loop.dealloc
func.func @runtime_rows(%x: memref<?x4xf32>, %out: memref<?x2xf32>, %n: index, %m: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %a = loop.alloc global sizes(%n) : memref<?x4xf32>
  %b = loop.alloc global sizes(%n) : memref<?x2xf32>
  %c = loop.alloc global sizes(%m) : memref<?x2xf32>
  %s = loop.alloc global : memref<16xf32>
  func.call @use_rows(%x, %a, %b, %c, %s) : (memref<?x4xf32>, memref<?x4xf32>, memref<?x2xf32>, memref<?x2xf32>, memref<16xf32>) -> ()
  loop.dealloc %a : memref<?x4xf32>
  loop.dealloc %b : memref<?x2xf32>
  loop.dealloc %c : memref<?x2xf32>
  loop.dealloc %s : memref<16xf32>
  func.return
}
func.func private @use_rows(%x: memref<?x4xf32>, %a: memref<?x4xf32>, %b: memref<?x2xf32>, %c: memref<?x2xf32>, %s: memref<16xf32>)

// -----

// Buffers of runtime sizes (several runtime dims, computed by integer arith from the arguments)
// share one workspace laid out at each call: slots in a row, each as large as its largest buffer
// at the call's sizes. %a and %c (the same size) are never live together: one slot, the larger
// of the two (`arith.maxui`); %b is live with both: a slot after it. The ops computing %b's sizes
// move before the workspace; each buffer is a view at its slot's offset, its deallocs gone. A
// buffer whose size a call returns (%d) is left as it is.
// CHECK-LABEL: func.func @runtime_sizes
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[H2:.*]] = arith.floordivsi %h, %[[TWO]] : index
// CHECK-NEXT:    %[[W2:.*]] = arith.floordivsi %w, %[[TWO]] : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[F_A:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[A0:.*]] = arith.muli %[[F_A]], %n : index
// CHECK-NEXT:    %[[A1:.*]] = arith.muli %[[A0]], %h : index
// CHECK-NEXT:    %[[A2:.*]] = arith.muli %[[A1]], %w : index
// CHECK-NEXT:    %[[BELOW:.*]] = arith.constant 63 : index
// CHECK-NEXT:    %[[SIXTY_FOUR:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[A3:.*]] = arith.addi %[[A2]], %[[BELOW]] : index
// CHECK-NEXT:    %[[A4:.*]] = arith.divui %[[A3]], %[[SIXTY_FOUR]] : index
// CHECK-NEXT:    %[[A:.*]] = arith.muli %[[A4]], %[[SIXTY_FOUR]] : index
// CHECK-COUNT-8: arith.
// CHECK-NEXT:    %[[C:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[SLOT0:.*]] = arith.maxui %[[A]], %[[C]] : index
// CHECK-NEXT:    %[[OFF_B:.*]] = arith.addi %[[ZERO]], %[[SLOT0]] : index
// CHECK-NEXT:    %[[F_B:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[B0:.*]] = arith.muli %[[F_B]], %n : index
// CHECK-NEXT:    %[[B1:.*]] = arith.muli %[[B0]], %[[H2]] : index
// CHECK-NEXT:    %[[B2:.*]] = arith.muli %[[B1]], %[[W2]] : index
// CHECK-NEXT:    %[[BYTES:.*]] = arith.addi %[[OFF_B]], %[[B2]] : index
// CHECK-NEXT:    %[[WS:.*]] = loop.alloc global sizes(%[[BYTES]]) : memref<?xi8>
// CHECK-NEXT:    %a = memref.view %[[WS]][%[[ZERO]]][%n, %h, %w] : memref<?xi8> to memref<?x8x?x?xf32>
// CHECK-NEXT:    func.call @same(%x, %a)
// CHECK-NEXT:    %b = memref.view %[[WS]][%[[OFF_B]]][%n, %[[H2]], %[[W2]]] : memref<?xi8> to memref<?x16x?x?xf32>
// CHECK-NEXT:    func.call @down(%a, %b)
// CHECK-NEXT:    %c = memref.view %[[WS]][%[[ZERO]]][%n, %h, %w] : memref<?xi8> to memref<?x8x?x?xf32>
// CHECK-NEXT:    func.call @up(%b, %c)
// CHECK-NEXT:    %k = func.call @count() : () -> index
// CHECK-NEXT:    %d = loop.alloc global sizes(%k, %k) : memref<?x?xf32>
// CHECK-NEXT:    func.call @same(%c, %out)
// CHECK-NEXT:    loop.dealloc %d : memref<?x?xf32>
// CHECK-NEXT:    func.return
func.func @runtime_sizes(%x: memref<?x8x?x?xf32>, %out: memref<?x8x?x?xf32>, %n: index, %h: index, %w: index, %on: index, %oh: index, %ow: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %a = loop.alloc global sizes(%n, %h, %w) : memref<?x8x?x?xf32>
  func.call @same(%x, %a) : (memref<?x8x?x?xf32>, memref<?x8x?x?xf32>) -> ()
  %c2 = arith.constant 2 : index
  %h2 = arith.floordivsi %h, %c2 : index
  %w2 = arith.floordivsi %w, %c2 : index
  %b = loop.alloc global sizes(%n, %h2, %w2) : memref<?x16x?x?xf32>
  func.call @down(%a, %b) : (memref<?x8x?x?xf32>, memref<?x16x?x?xf32>) -> ()
  loop.dealloc %a : memref<?x8x?x?xf32>
  %c = loop.alloc global sizes(%n, %h, %w) : memref<?x8x?x?xf32>
  func.call @up(%b, %c) : (memref<?x16x?x?xf32>, memref<?x8x?x?xf32>) -> ()
  loop.dealloc %b : memref<?x16x?x?xf32>
  %k = func.call @count() : () -> index
  %d = loop.alloc global sizes(%k, %k) : memref<?x?xf32>
  func.call @same(%c, %out) : (memref<?x8x?x?xf32>, memref<?x8x?x?xf32>) -> ()
  loop.dealloc %c : memref<?x8x?x?xf32>
  loop.dealloc %d : memref<?x?xf32>
  func.return
}
func.func private @same(memref<?x8x?x?xf32>, memref<?x8x?x?xf32>)
func.func private @down(memref<?x8x?x?xf32>, memref<?x16x?x?xf32>)
func.func private @up(memref<?x16x?x?xf32>, memref<?x8x?x?xf32>)
func.func private @count() -> index

// -----

// A concat of buffers of runtime size along an axis with a runtime size before it (the batch):
// done in place where the call's batch is 1 and the second piece starts at an aligned byte
// offset of the output (the first piece's bytes, 64 x h x w, a multiple of 64 here for any
// size but checked all the same); each piece's view is then inside the output's slot, else in
// its own, and the concat runs only where the pieces are not in place. The output's slot is
// taken from the first piece's allocation on. With `concat_in_place=false`, nothing of this.
// CHECK-LABEL: func.func @runtime_concat
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[LINE:.*]] = arith.constant 64 : index
// CHECK:         %[[BATCH_1:.*]] = arith.cmpi eq, %n, %[[ONE]] : index
// CHECK:         %[[AT_A:.*]] = arith.addi %[[OUT_OFF:.*]], %{{.*}} : index
// CHECK:         %[[REM:.*]] = arith.remui %[[SIZE_A:.*]], %[[LINE]] : index
// CHECK:         %[[ALIGNED:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : index
// CHECK:         %[[IN_PLACE:.*]] = arith.andi %[[BATCH_1]], %[[ALIGNED]] : i1
// CHECK:         %[[AT_B:.*]] = arith.addi %[[OUT_OFF]], %[[SIZE_A]] : index
// CHECK:         %[[OFF_A:.*]] = arith.select %[[IN_PLACE]], %[[AT_A]], %{{.*}} : index
// CHECK:         %[[OFF_B:.*]] = arith.select %[[IN_PLACE]], %[[AT_B]], %{{.*}} : index
// CHECK:         %[[WS:.*]] = loop.alloc global sizes(%{{.*}}) : memref<?xi8>
// CHECK:         %a = memref.view %[[WS]][%[[OFF_A]]][%n, %h, %w]
// CHECK:         %b = memref.view %[[WS]][%[[OFF_B]]][%n, %h, %w]
// CHECK:         %c = memref.view %[[WS]][%[[OUT_OFF]]][%n, %h, %w]
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         %[[COPY:.*]] = arith.xori %[[IN_PLACE]], %[[TRUE]] : i1
// CHECK-NEXT:    scf.if %[[COPY]] {
// CHECK-NEXT:      func.call @join(%a, %b, %c, %n, %h, %w, %n, %h, %w, %n, %h, %w)
// CHECK-NEXT:    }
// CHECK-NEXT:    func.call @copy32(%c, %out)
// KEEP-LABEL: func.func @runtime_concat
// KEEP-NOT:     arith.select
// KEEP:         func.call @join(%a, %b, %c, %n, %h, %w, %n, %h, %w, %n, %h, %w)
func.func @runtime_concat(%x: memref<?x16x?x?xf32>, %out: memref<?x32x?x?xf32>, %n: index, %h: index, %w: index, %on: index, %oh: index, %ow: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %a = loop.alloc global sizes(%n, %h, %w) : memref<?x16x?x?xf32>
  func.call @halve(%x, %a) : (memref<?x16x?x?xf32>, memref<?x16x?x?xf32>) -> ()
  %b = loop.alloc global sizes(%n, %h, %w) : memref<?x16x?x?xf32>
  func.call @halve(%x, %b) : (memref<?x16x?x?xf32>, memref<?x16x?x?xf32>) -> ()
  %c = loop.alloc global sizes(%n, %h, %w) : memref<?x32x?x?xf32>
  func.call @join(%a, %b, %c, %n, %h, %w, %n, %h, %w, %n, %h, %w) : (memref<?x16x?x?xf32>, memref<?x16x?x?xf32>, memref<?x32x?x?xf32>, index, index, index, index, index, index, index, index, index) -> ()
  func.call @copy32(%c, %out) : (memref<?x32x?x?xf32>, memref<?x32x?x?xf32>) -> ()
  func.return
}
func.func private @halve(memref<?x16x?x?xf32>, memref<?x16x?x?xf32>) attributes {dlc.num_outputs = 1 : i64}
func.func private @copy32(memref<?x32x?x?xf32>, memref<?x32x?x?xf32>) attributes {dlc.num_outputs = 1 : i64}
func.func private @join(memref<?x16x?x?xf32>, memref<?x16x?x?xf32>, memref<?x32x?x?xf32>, index, index, index, index, index, index, index, index, index) attributes {dlc.num_outputs = 1 : i64, dlc.concat_axis = 1 : i64, dlc.dim_args = 9 : i64}
