;; The one numeric kernel of the speaker encoder, in WebAssembly with 128-bit SIMD: a matrix
;; product against a transposed matrix, which is what an LSTM step over a batch, the LSTM's input
;; projections and the DFT of the mel front end all are. Assembled by `npm run build-kernels`
;; into kernels.wasm.ts (committed; a test checks the two agree).
;;
;;   out[r*G + g] = base[r*bs + g] + Σ_k W[g*K + k] · X[r*K + k]     (r < R, g < G, k < K)
;;
;; Pointers are byte offsets into the exported memory; K must be a multiple of 4. Four rows of X
;; are taken at once, so each vector of W read serves four dot products.
(module
  (memory (export "memory") 1)
  (func $hsum (param $v v128) (result f32)
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $v)) (f32x4.extract_lane 1 (local.get $v)))
      (f32.add (f32x4.extract_lane 2 (local.get $v)) (f32x4.extract_lane 3 (local.get $v)))))
  (func (export "gemm_nt")
    (param $W i32) (param $G i32) (param $K i32) (param $X i32) (param $R i32)
    (param $base i32) (param $bs i32) (param $out i32)
    (local $r i32) (local $g i32) (local $k i32) (local $kb i32)
    (local $wrow i32) (local $x0 i32) (local $x1 i32) (local $x2 i32) (local $x3 i32)
    (local $w v128) (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $o i32) (local $bo i32)
    (local.set $kb (i32.shl (local.get $K) (i32.const 2)))
    (local.set $r (i32.const 0))
    ;; blocks of four rows
    (block $quads_done
      (loop $quads
        (br_if $quads_done (i32.gt_u (i32.add (local.get $r) (i32.const 4)) (local.get $R)))
        (local.set $x0 (i32.add (local.get $X) (i32.mul (local.get $r) (local.get $kb))))
        (local.set $x1 (i32.add (local.get $x0) (local.get $kb)))
        (local.set $x2 (i32.add (local.get $x1) (local.get $kb)))
        (local.set $x3 (i32.add (local.get $x2) (local.get $kb)))
        (local.set $g (i32.const 0))
        (loop $cols
          (local.set $wrow (i32.add (local.get $W) (i32.mul (local.get $g) (local.get $kb))))
          (local.set $a0 (v128.const i32x4 0 0 0 0))
          (local.set $a1 (v128.const i32x4 0 0 0 0))
          (local.set $a2 (v128.const i32x4 0 0 0 0))
          (local.set $a3 (v128.const i32x4 0 0 0 0))
          (local.set $k (i32.const 0))
          (loop $inner
            (local.set $w (v128.load align=4 (i32.add (local.get $wrow) (local.get $k))))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (local.get $w) (v128.load align=4 (i32.add (local.get $x0) (local.get $k))))))
            (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (local.get $w) (v128.load align=4 (i32.add (local.get $x1) (local.get $k))))))
            (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (local.get $w) (v128.load align=4 (i32.add (local.get $x2) (local.get $k))))))
            (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (local.get $w) (v128.load align=4 (i32.add (local.get $x3) (local.get $k))))))
            (local.set $k (i32.add (local.get $k) (i32.const 16)))
            (br_if $inner (i32.lt_u (local.get $k) (local.get $kb))))
          ;; o = byte offset of out[r*G + g]; bo = byte offset of base[r*bs + g]
          (local.set $o (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $G)) (local.get $g)) (i32.const 2))))
          (local.set $bo (i32.add (local.get $base) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $bs)) (local.get $g)) (i32.const 2))))
          (f32.store (local.get $o) (f32.add (f32.load (local.get $bo)) (call $hsum (local.get $a0))))
          (local.set $o (i32.add (local.get $o) (i32.shl (local.get $G) (i32.const 2))))
          (local.set $bo (i32.add (local.get $bo) (i32.shl (local.get $bs) (i32.const 2))))
          (f32.store (local.get $o) (f32.add (f32.load (local.get $bo)) (call $hsum (local.get $a1))))
          (local.set $o (i32.add (local.get $o) (i32.shl (local.get $G) (i32.const 2))))
          (local.set $bo (i32.add (local.get $bo) (i32.shl (local.get $bs) (i32.const 2))))
          (f32.store (local.get $o) (f32.add (f32.load (local.get $bo)) (call $hsum (local.get $a2))))
          (local.set $o (i32.add (local.get $o) (i32.shl (local.get $G) (i32.const 2))))
          (local.set $bo (i32.add (local.get $bo) (i32.shl (local.get $bs) (i32.const 2))))
          (f32.store (local.get $o) (f32.add (f32.load (local.get $bo)) (call $hsum (local.get $a3))))
          (local.set $g (i32.add (local.get $g) (i32.const 1)))
          (br_if $cols (i32.lt_u (local.get $g) (local.get $G))))
        (local.set $r (i32.add (local.get $r) (i32.const 4)))
        (br $quads)))
    ;; the rows left over, one at a time
    (block $rows_done
      (loop $rows
        (br_if $rows_done (i32.ge_u (local.get $r) (local.get $R)))
        (local.set $x0 (i32.add (local.get $X) (i32.mul (local.get $r) (local.get $kb))))
        (local.set $g (i32.const 0))
        (loop $cols1
          (local.set $wrow (i32.add (local.get $W) (i32.mul (local.get $g) (local.get $kb))))
          (local.set $a0 (v128.const i32x4 0 0 0 0))
          (local.set $k (i32.const 0))
          (loop $inner1
            (local.set $a0 (f32x4.add (local.get $a0)
              (f32x4.mul (v128.load align=4 (i32.add (local.get $wrow) (local.get $k))) (v128.load align=4 (i32.add (local.get $x0) (local.get $k))))))
            (local.set $k (i32.add (local.get $k) (i32.const 16)))
            (br_if $inner1 (i32.lt_u (local.get $k) (local.get $kb))))
          (local.set $o (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $G)) (local.get $g)) (i32.const 2))))
          (local.set $bo (i32.add (local.get $base) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $bs)) (local.get $g)) (i32.const 2))))
          (f32.store (local.get $o) (f32.add (f32.load (local.get $bo)) (call $hsum (local.get $a0))))
          (local.set $g (i32.add (local.get $g) (i32.const 1)))
          (br_if $cols1 (i32.lt_u (local.get $g) (local.get $G))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rows))))
)
