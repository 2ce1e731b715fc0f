// Payload for the library form of loop-interpret-transforms (the schedule is in another file).
func.func @scale(%X: memref<8xf32>, %Y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.block "scale" reads(%X : memref<8xf32>) writes(%Y : memref<8xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<8xf32> -> f32
      loop.store %x, %Y[%i] : f32 -> memref<8xf32>
    }
  }
  func.return
}
