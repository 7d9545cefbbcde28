// The speaker encoder's WebAssembly kernel: the committed bytes are what kernels.wat assembles
// to, and its matrix product agrees with plain arithmetic (rows in fours and the rest, a bias
// row or a full base).
import t from 'tap'
import { assembleKernels, kernelsModuleSource } from '../scripts/buildKernels.ts'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Kernels } from '../adapters/ge2e/kernels.ts'

t.test('kernels.wasm.ts is kernels.wat assembled (run `npm run build-kernels` after editing the .wat)', async (t) => {
  const committed = readFileSync(join(import.meta.dirname, '..', 'adapters', 'ge2e', 'kernels.wasm.ts'), 'utf8')
  t.equal(committed, kernelsModuleSource(await assembleKernels()))
})

t.test('gemm matches plain arithmetic', async (t) => {
  const k = new Kernels()
  const G = 6
  const K = 8
  const R = 7 // one block of four rows and three single rows
  const w = Float32Array.from({ length: G * K }, (_, i) => Math.sin(i))
  const W = k.keep(w, G, K)
  const bias = Float32Array.from({ length: G }, (_, i) => i / 10)
  const B = k.keep(bias, 1, G)
  const x = Float32Array.from({ length: R * K }, (_, i) => Math.cos(i * 0.7))
  k.begin(R * K + 2 * R * G)
  const X = k.alloc(R * K)
  k.view(X, R * K).set(x)
  const base = k.alloc(R * G)
  k.view(base, R * G).set(Float32Array.from({ length: R * G }, (_, i) => i))
  const out = k.alloc(R * G)
  const expect = (r: number, g: number, b: number) => b + Array.from({ length: K }, (_, j) => w[g * K + j]! * x[r * K + j]!).reduce((a, v) => a + v, 0)
  k.gemm(W, X, R, B.ptr, 0, out)
  const withBias = k.view(out, R * G)
  for (let r = 0; r < R; r++) for (let g = 0; g < G; g++) t.ok(Math.abs(withBias[r * G + g]! - expect(r, g, bias[g]!)) < 1e-4, `bias row: out[${r}][${g}]`)
  k.gemm(W, X, R, base, G, out)
  const withBase = k.view(out, R * G)
  for (let r = 0; r < R; r++) for (let g = 0; g < G; g++) t.ok(Math.abs(withBase[r * G + g]! - expect(r, g, r * G + g)) < 1e-4, `full base: out[${r}][${g}]`)
  t.throws(() => k.gemm({ ptr: W.ptr, rows: G, cols: 6 }, X, R, B.ptr, 0, out), /multiple of 4/)
})
