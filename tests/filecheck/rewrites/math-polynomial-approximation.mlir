// RUN: dlc-opt %s -p math-polynomial-approximation | filecheck %s

// exp: clamp (NaN-propagating max/min), n = round(x log2(e)) by the shifter (x log2(e) plus
// 1.5 2^23 + 126, then minus it: no floor), r = x - n ln2 in two multiply-adds, a degree-6
// polynomial times 2 as a last multiply-add 2 y + 2, and 2^(n-1) built from float bits: the
// integer n + 126 is the low 9 bits of the shifted sum's bits (no fptosi): one shift by 23
// moves it into the exponent field and the shifter's bits out (no subtraction); the clamp at
// -87.5 keeps it at least 0 (no integer max; exponent field 0: the result is exactly 0, never
// a tiny value that a softmax scales into denormals).
// CHECK-LABEL: func.func @exp(%x: f32) -> f32 {
// CHECK-NOT:     math.exp
// CHECK:         %[[LO:.*]] = arith.maximumf %x, %{{.*}} : f32
// CHECK:         %[[C:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK:         %[[XL:.*]] = arith.mulf %[[C]], %{{.*}} : f32
// CHECK-NEXT:    %[[SHIFTER:.*]] = arith.constant 0x4B40007E : f32
// CHECK-NEXT:    %[[T:.*]] = arith.addf %[[XL]], %[[SHIFTER]] : f32
// CHECK:         %[[N:.*]] = arith.subf %[[T]], %{{.*}} : f32
// CHECK-NEXT:    arith.constant -0.693359375 : f32
// CHECK-NEXT:    %[[NH:.*]] = arith.mulf %[[N]], %{{.*}} : f32
// CHECK-NEXT:    %[[R1:.*]] = arith.addf %[[NH]], %[[C]] : f32
// CHECK:         %[[NL:.*]] = arith.mulf %[[N]], %{{.*}} : f32
// CHECK-NEXT:    %[[R:.*]] = arith.addf %[[NL]], %[[R1]] : f32
// CHECK-NEXT:    arith.constant 0.00138145708 : f32
// CHECK:         %[[Y:.*]] = arith.addf %{{.*}}, %[[R]] : f32
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %[[Y2:.*]] = arith.mulf %[[Y]], %[[TWO]] : f32
// CHECK-NEXT:    %[[TWO2:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %[[Y3:.*]] = arith.addf %[[Y2]], %[[TWO2]] : f32
// CHECK-NEXT:    %[[TB:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK-NEXT:    arith.constant 23 : i32
// CHECK-NEXT:    %[[BITS:.*]] = arith.shli %[[TB]], %{{.*}} : i32
// CHECK-NEXT:    %[[P2:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK-NEXT:    %[[RES:.*]] = arith.mulf %[[Y3]], %[[P2]] : f32
// CHECK-NEXT:    func.return %[[RES]] : f32
// CHECK-NOT:     arith.fptosi
// CHECK-NOT:     math.floor
func.func @exp(%x: f32) -> f32 {
  %y = math.exp %x : f32
  func.return %y : f32
}

// erf: a Taylor polynomial of x^2 below |x| = 0.5, Abramowitz-Stegun 7.1.26 (with the exp
// expansion of -x^2) above, its sign copied from x; the two are blended by the sign bit of
// |x| - 0.5 spread into a mask, large ^ ((small ^ large) & mask) (no compare).
// CHECK-LABEL: func.func @erf(%x: f32) -> f32 {
// CHECK-NOT:     math.erf
// CHECK:         %[[ABS:.*]] = math.absf %x : f32
// CHECK:         %[[SQ:.*]] = arith.mulf %x, %x : f32
// CHECK:         arith.constant 0.327591091 : f32
// CHECK:         arith.negf %[[SQ]] : f32
// CHECK:         arith.constant 0x4B40007E : f32
// CHECK:         %[[LARGE:.*]] = math.copysign %{{.*}}, %x : f32
// CHECK:         %[[D:.*]] = arith.subf %[[ABS]], %{{.*}} : f32
// CHECK-NEXT:    %[[DB:.*]] = arith.bitcast %[[D]] : f32 to i32
// CHECK-NEXT:    arith.constant 31 : i32
// CHECK-NEXT:    %[[MASK:.*]] = arith.shrsi %[[DB]], %{{.*}} : i32
// CHECK-NEXT:    %[[SMALL:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK-NEXT:    %[[LB:.*]] = arith.bitcast %[[LARGE]] : f32 to i32
// CHECK-NEXT:    %[[DIFF:.*]] = arith.xori %[[SMALL]], %[[LB]] : i32
// CHECK-NEXT:    %[[PICK:.*]] = arith.andi %[[DIFF]], %[[MASK]] : i32
// CHECK-NEXT:    %[[BLEND:.*]] = arith.xori %[[LB]], %[[PICK]] : i32
// CHECK-NEXT:    %[[R:.*]] = arith.bitcast %[[BLEND]] : i32 to f32
// CHECK-NEXT:    func.return %[[R]] : f32
func.func @erf(%x: f32) -> f32 {
  %y = math.erf %x : f32
  func.return %y : f32
}

// tanh: the argument clamped to [-7.9988, 7.9988], x P(x^2) / Q(x^2), and x itself below
// |x| = 0.0004, blended by the sign bit of |x| - 0.0004 (no compare).
// CHECK-LABEL: func.func @tanh(%x: f32) -> f32 {
// CHECK-NOT:     math.tanh
// CHECK:         %[[LO:.*]] = arith.maximumf %x, %{{.*}} : f32
// CHECK:         %[[C:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK-NEXT:    %[[SQ:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK:         %[[NUM:.*]] = arith.mulf %[[C]], %{{.*}} : f32
// CHECK:         %[[RATIO:.*]] = arith.divf %[[NUM]], %{{.*}} : f32
// CHECK-NEXT:    %[[ABS:.*]] = math.absf %x : f32
// CHECK:         %[[D:.*]] = arith.subf %[[ABS]], %{{.*}} : f32
// CHECK-NEXT:    %[[DB:.*]] = arith.bitcast %[[D]] : f32 to i32
// CHECK:         %[[MASK:.*]] = arith.shrsi %[[DB]], %{{.*}} : i32
// CHECK-NEXT:    %[[XB:.*]] = arith.bitcast %x : f32 to i32
// CHECK-NEXT:    %[[RB:.*]] = arith.bitcast %[[RATIO]] : f32 to i32
// CHECK:         func.return
func.func @tanh(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  func.return %y : f32
}

// Other types keep their math op (and their libm call).
// CHECK-LABEL: func.func @f64
// CHECK-NEXT:    math.exp %x : f64
// CHECK-LABEL: func.func @vector
// CHECK-NEXT:    math.erf %x : vector<16xf32>
func.func @f64(%x: f64) -> f64 {
  %y = math.exp %x : f64
  func.return %y : f64
}
func.func @vector(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.erf %x : vector<16xf32>
  func.return %y : vector<16xf32>
}
