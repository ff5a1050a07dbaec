package native

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// One accumulation order for every kernel set: each kernel, run under
// every set the host runs, gives the portable set's bits, on random inputs
// with lengths that are not multiples of the vector widths, subnormals,
// -Inf scores and long reductions. The float64 references of the other
// tests say the bits are right; these say they are the same everywhere.

// setsOutput runs f under each runnable set and returns its outputs by set.
func setsOutput(f func() []float32) map[kernelSet][]float32 {
	defer setKernels(setKernels(kset))
	out := map[kernelSet][]float32{}
	for _, s := range runnableSets() {
		setKernels(s)
		out[s] = f()
	}
	return out
}

// sameBits reports the first element where some set's output differs in
// its bits from the portable set's, or "".
func sameBits(outs map[kernelSet][]float32) string {
	ref := outs[setPortable]
	for s, o := range outs {
		if len(o) != len(ref) {
			return fmt.Sprintf("%s gives %d values, portable %d", s, len(o), len(ref))
		}
		for i := range o {
			if math.Float32bits(o[i]) != math.Float32bits(ref[i]) {
				return fmt.Sprintf("%s: value %d = %v (%#08x), portable %v (%#08x)", s, i, o[i], math.Float32bits(o[i]), ref[i], math.Float32bits(ref[i]))
			}
		}
	}
	return ""
}

// kernelCase is one kernel on fixed inputs (f draws them from its own
// seeded generator, so every set sees the same), returning every output.
type kernelCase struct {
	name string
	f    func() []float32
}

// mixed draws normal values at scale sc with some subnormals and zeros.
func mixed(r *rand.Rand, n int, sc float64) []float32 {
	x := randSlice(r, n, sc)
	for i := range x {
		switch r.IntN(23) {
		case 0:
			x[i] = float32(r.NormFloat64() * 1e-39) // subnormal
		case 1:
			x[i] = 0
		}
	}
	return x
}

func kernelCases() []kernelCase {
	var cs []kernelCase
	add := func(name string, f func(r *rand.Rand) []float32) {
		seed := uint64(len(cs) + 1)
		cs = append(cs, kernelCase{name, func() []float32 { return f(rand.New(rand.NewPCG(seed, 99))) }})
	}
	for _, sh := range [][3]int{{1, 16, 64}, {7, 32, 64}, {48, 32, 64}, {33, 64, 128}, {5, 3, 48}, {12, 100, 64}} {
		nq, d, bk := sh[0], sh[1], sh[2]
		add(fmt.Sprintf("QKBlock/%dx%dx%d", nq, d, bk), func(r *rand.Rand) []float32 {
			q, kt, s := mixed(r, nq*d, 1), mixed(r, d*bk, 1), make([]float32, nq*bk)
			QKBlock(s, q, kt, nq, d, bk)
			return s
		})
	}
	for _, sh := range [][3]int{{1, 32, 64}, {7, 64, 13}, {48, 32, 64}, {17, 96, 64}, {5, 48, 30}, {13, 20, 64}} {
		nq, d, nk := sh[0], sh[1], sh[2]
		for _, scaled := range []bool{false, true} {
			add(fmt.Sprintf("PVBlock/%dx%dx%d/scaled=%v", nq, d, nk, scaled), func(r *rand.Rand) []float32 {
				p, v, o, f := mixed(r, nq*64, 1), mixed(r, 64*d, 1), mixed(r, nq*d, 1), mixed(r, nq, 1)
				if scaled {
					PVBlockScaled(o, p, v, nq, d, 64, nk, f)
				} else {
					PVBlock(o, p, v, nq, d, 64, nk)
				}
				return o
			})
		}
	}
	for _, sz := range [][3]int{{1, 1, 1}, {5, 3, 7}, {13, 37, 100}, {64, 64, 32}, {67, 130, 96}, {100, 1100, 70}, {130, 130, 130}} {
		m, k, n := sz[0], sz[1], sz[2]
		for _, tri := range []Tri{Dense, LowerC, LowerA | LowerC, UpperA, LowerB, UpperB} {
			if tri&LowerC != 0 && m != n || tri&(LowerA|UpperA) != 0 && m != k || tri&(LowerB|UpperB) != 0 && k != n {
				continue
			}
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					for _, acc := range []bool{false, true} {
						add(fmt.Sprintf("Gemm/%dx%dx%d/tri%d/ta=%v/tb=%v/acc=%v", m, k, n, tri, ta, tb, acc), func(r *rand.Rand) []float32 {
							a, b, c := mixed(r, m*k, 1), mixed(r, k*n, 1), mixed(r, m*n, 1)
							Gemm{C: c, A: a, B: b, M: m, K: k, N: n, TA: ta, TB: tb, Acc: acc, Tri: tri, Workers: 2}.Run()
							if tri&LowerC != 0 { // only j <= i is defined
								for i := range m {
									clear(c[i*n+i+1 : i*n+n])
								}
							}
							return c
						})
					}
				}
			}
		}
	}
	// A B of at least panelMajorMinKN elements: the AVX2 set runs its tiles
	// in panel order, the others in row order.
	if 1030*1040 < panelMajorMinKN {
		panic("kernelCases: the panel-order case no longer reaches panelMajorMinKN")
	}
	for _, acc := range []bool{false, true} {
		add(fmt.Sprintf("Gemm/panel-order/70x1030x1040/acc=%v", acc), func(r *rand.Rand) []float32 {
			a, b, c := mixed(r, 70*1030, 1), mixed(r, 1030*1040, 1), mixed(r, 70*1040, 1)
			Gemm{C: c, A: a, B: b, M: 70, K: 1030, N: 1040, Acc: acc, Workers: 2}.Run()
			return c
		})
	}
	add("GemmPacked/70x300x100", func(r *rand.Rand) []float32 {
		a, b, c := mixed(r, 70*300, 1), mixed(r, 300*100, 1), mixed(r, 70*100, 1)
		GemmPacked(c, 100, a, 300, PackB(b, 300, 100), 70, true)
		return c
	})
	for _, n := range []int{1, 15, 16, 17, 40, 64, 100, 1000} {
		add(fmt.Sprintf("ExpShift/n=%d", n), func(r *rand.Rand) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.Float64()*-130 + 3) // down to -127: 0s, subnormals (-87..-104)
				if i%11 == 5 {
					x[i] = float32(math.Inf(-1))
				}
			}
			s := ExpShift(x, 2.5)
			return append(x, s)
		})
		add(fmt.Sprintf("GELU/n=%d", n), func(r *rand.Rand) []float32 {
			x := mixed(r, n, 4)
			GELU(x)
			return x
		})
		for _, bias := range []bool{false, true} {
			add(fmt.Sprintf("GELUTanh/n=%d/bias=%v", n, bias), func(r *rand.Rand) []float32 {
				u, th, g := mixed(r, n, 4), make([]float32, n), make([]float32, n)
				var b []float32
				if bias {
					b = mixed(r, n, 1)
				}
				GELUTanh(u, b, th, g)
				du := mixed(r, n, 1)
				GELUGradMul(du, u, th)
				return append(append(append(u, th...), g...), du...)
			})
		}
		add(fmt.Sprintf("SiLU/n=%d", n), func(r *rand.Rand) []float32 {
			y, w, sg := mixed(r, n, 4), make([]float32, n), make([]float32, n)
			SiLU(w, sg, y)
			dy := mixed(r, n, 1)
			SiLUGradMul(dy, y, sg)
			return append(append(w, sg...), dy...)
		})
		add(fmt.Sprintf("rows/n=%d", n), func(r *rand.Rand) []float32 {
			x, y, z := mixed(r, n, 3), mixed(r, n, 1), mixed(r, n, 1)
			x[n/2] = float32(math.Inf(-1))
			var out []float32
			m := ScaleMax(x, 0.37)
			out = append(out, m)
			Scale(y, 1.3)
			AddOffsets(x, 0.25, y)
			Add(y, z)
			SoftmaxGrad(z, y, 0.1, 0.17)
			w, v := make([]float32, n), make([]float32, n)
			Mul(w, y, z)
			AddMul(w, y, z)
			NormScale(v, z, y, w, 1.7)
			NormGrad(y, z, nil, 0.6, 0.3)
			NormGrad(w, z, v, 0.6, 0.3)
			return append(append(append(append(append(out, x...), y...), z...), w...), v...)
		})
	}
	for _, n := range []int{16, 48, 64, 1024} {
		add(fmt.Sprintf("MaxOf,AddRamp/n=%d", n), func(r *rand.Rand) []float32 {
			x := mixed(r, n, 2)
			m := MaxOf(x)
			AddRamp(x, -37, -0.0625)
			AddRamp(x, 3.5, 0.3) // a base that is no integer
			return append(x, m)
		})
	}
	for _, n := range []int{2, 14, 16, 30, 64, 98} {
		add(fmt.Sprintf("Rotate/n=%d", n), func(r *rand.Rand) []float32 {
			const rows = 3
			u, cs := mixed(r, n, 1), mixed(r, rows*n, 1)
			cos, sin := make([]float32, n), make([]float32, n)
			for e := 0; e+1 < n; e += 2 {
				cos[e], sin[e] = cs[e], cs[e+1]
				cos[e+1], sin[e+1] = cs[e], cs[e+1]
			}
			RotatePairs(u, cos, sin, -1)
			src, dst, dst2 := mixed(r, rows*n, 1), make([]float32, rows*n), make([]float32, rows*n)
			RotateRows(dst, n, src, n, cs, n, rows, n, 0.7)
			UnrotateRows(dst2, n, dst, n, cs, n, rows, n, 0.7)
			return append(append(u, dst...), dst2...)
		})
	}
	for _, nq := range []int{1, 2, 7, 23, 48} {
		for _, form := range []string{"plain", "entropy", "offsets", "entropy+offsets"} {
			add(fmt.Sprintf("OnlineSoftmax/%s/nq=%d", form, nq), func(r *rand.Rand) []float32 {
				m, l, f, rs, ent := make([]float32, 48), make([]float32, 48), make([]float32, 48), make([]float32, 48), make([]float32, 48)
				a, b := mixed(r, nq, 1), mixed(r, 64, 1)
				for i := range m {
					m[i] = float32(math.Inf(-1))
				}
				var out []float32
				for step := 0; step < 3; step++ {
					sc := mixed(r, nq*64, 5)
					for i := range sc {
						switch r.IntN(13) {
						case 0:
							sc[i] = float32(math.Inf(-1))
						case 1:
							sc[i] -= 95 // exp under 2^-126: zeroed lanes
						}
					}
					if step == 0 && nq > 1 {
						for j := 0; j < 64; j++ {
							sc[64+j] = float32(math.Inf(-1)) // a row with no keys yet
						}
					}
					switch form {
					case "plain":
						OnlineSoftmax64(sc, nq, m, l, f, rs)
					case "entropy":
						OnlineSoftmaxEntropy64(sc, nq, m, l, f, rs, ent)
					case "offsets":
						OnlineSoftmaxOffsets64(sc, nq, a, b, m, l, f, rs)
					default:
						OnlineSoftmaxEntropyOffsets64(sc, nq, a, b, m, l, f, rs, ent)
					}
					out = append(append(append(append(append(append(out, sc...), m[:nq]...), l[:nq]...), f[:nq]...), rs[:nq]...), ent[:nq]...)
				}
				return out
			})
		}
	}
	return cs
}

// TestKernelSetsBitwise: every kernel case gives the same bits under every
// kernel set the host runs (on an AVX-512 host all three, on an AVX2 host
// two; alone, the portable set only checks itself).
func TestKernelSetsBitwise(t *testing.T) {
	if len(runnableSets()) < 2 {
		t.Skipf("only the portable set runs here (%s): nothing to compare", KernelName())
	}
	t.Logf("kernel sets compared: %v", KernelSets())
	for _, c := range kernelCases() {
		if msg := sameBits(setsOutput(c.f)); msg != "" {
			t.Errorf("%s: %s", c.name, msg)
		}
	}
}

// TestKernelSetsBitwiseCanFail: with one reduction reordered in the
// portable set (hsum16 summed left to right instead of the vector tree)
// the comparison finds differences, so TestKernelSetsBitwise can fail.
func TestKernelSetsBitwiseCanFail(t *testing.T) {
	if len(runnableSets()) < 2 {
		t.Skip("only the portable set runs here: nothing to compare")
	}
	defer func() { mutateHsum = false }()
	caught := 0
	var first string
	for _, c := range kernelCases() {
		outs := map[kernelSet][]float32{}
		for s, o := range setsOutput(c.f) {
			outs[s] = o
		}
		mutateHsum = true
		func() {
			defer setKernels(setKernels(setPortable))
			outs[setPortable] = c.f()
		}()
		mutateHsum = false
		if msg := sameBits(outs); msg != "" {
			caught++
			if first == "" {
				first = c.name + ": " + msg
			}
		}
	}
	if caught == 0 {
		t.Fatal("the reordered horizontal sum went unnoticed: the bit-identity test cannot fail")
	}
	t.Logf("the reordered sum is caught in %d cases, e.g. %s", caught, first)
}

// TestFMA32: fma32 is a*b + c rounded once to float32 (the exact value by
// math/big) on random operands and on ones built so that the float64 sum
// lies half-way between two float32s; the double-rounding shortcut
// (fma32Double) fails on the latter, so the check can fail.
func TestFMA32(t *testing.T) {
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	r := rand.New(rand.NewPCG(5, 5))
	type triple struct{ a, b, c float32 }
	var cases []triple
	for range 200000 {
		cases = append(cases, triple{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(60)-30)))})
	}
	// Hard cases: c = 1 + 2^-23 + 2^-24 (half-way between two float32s
	// after a tiny product is added in float64) and a*b = +-2^-60 ..., so
	// that the float64 sum rounds onto the midpoint and the exact value
	// does not sit there.
	var hard []triple
	for e := 50; e < 70; e++ {
		for _, sgn := range []float32{1, -1} {
			a := float32(math.Ldexp(1, -e)) * sgn
			for _, b := range []float32{1.5, 1.25, 1.0000001, 1.9999999} {
				hard = append(hard, triple{a, b, 1 + 0x1p-23})
				hard = append(hard, triple{a, b, -(1 + 0x1p-23)})
			}
		}
	}
	// subnormal results
	for range 20000 {
		cases = append(cases, triple{float32(r.NormFloat64() * 1e-20), float32(r.NormFloat64() * 1e-19), float32(r.NormFloat64() * 1e-39)})
	}
	for _, tc := range append(cases, hard...) {
		if got, want := fma32(tc.a, tc.b, tc.c), exact(tc.a, tc.b, tc.c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%g, %g, %g) = %g, exact %g", tc.a, tc.b, tc.c, got, want)
		}
	}
	// Midpoint cases proper: a*b + c with c's last bit and a tiny product
	// that puts the float64 sum exactly half-way.
	wrong := 0
	for i := 0; i < 200000; i++ {
		c := float32(1 + float64(r.IntN(1<<23))*0x1p-23)
		// a*b = half an ulp of c (2^-24) plus a tiny signed part below
		// float64's resolution at 1.
		a := float32(0x1p-24 * (1 + float64(r.IntN(1<<10))*0x1p-23))
		b := float32(1 - float64(r.IntN(1<<10))*0x1p-23)
		if exact(a, b, c) != fma32Double(a, b, c) {
			wrong++
		}
		if got, want := fma32(a, b, c), exact(a, b, c); got != want {
			t.Fatalf("fma32(%g, %g, %g) = %g, exact %g", a, b, c, got, want)
		}
	}
	if wrong == 0 {
		t.Fatal("the double-rounding FMA never differs on the midpoint cases: they do not test the rounding")
	}
	t.Logf("double rounding differs from the exact FMA in %d of 200000 midpoint cases; fma32 in none", wrong)
}
