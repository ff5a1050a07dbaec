//go:build amd64 && !purego

//go:generate go run gen_kern_avx2_amd64.go

package native

import "math"

// AVX2 + FMA kernels in Go assembly (kern_avx2_amd64.s, written by
// gen_kern_avx2_amd64.go: go generate): the AVX-512 set's arithmetic on
// 8-lane vectors, for the x86-64 CPUs without AVX-512 (Intel's client
// CPUs since Alder Lake, AMD Zen 2 and 3, many cloud instances). The
// dispatching functions of kern_asm_amd64.go call these when useAVX2.

//go:noescape
func kern1x16AVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern2x16AVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern3x16AVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern4x16AVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern5x16AVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern6x16AVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern1x16TAVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern2x16TAVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern3x16TAVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern4x16TAVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern5x16TAVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern6x16TAVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

// kernAVX2 calls the r-row 16-column tile directly (see kern6 on why not
// through a function value); trans reads A stored transposed.
func kernAVX2(r int, trans bool, a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int) {
	if trans {
		switch r {
		case 6:
			kern6x16TAVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
		case 5:
			kern5x16TAVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
		case 4:
			kern4x16TAVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
		case 3:
			kern3x16TAVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
		case 2:
			kern2x16TAVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
		default:
			kern1x16TAVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
		}
		return
	}
	switch r {
	case 6:
		kern6x16AVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
	case 5:
		kern5x16AVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
	case 4:
		kern4x16AVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
	case 3:
		kern3x16AVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
	case 2:
		kern2x16AVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
	default:
		kern1x16AVX2(a, lda, b, ldb, k, c, ldc, scale, mode)
	}
}

// mmAVX2 is mmAsm (trans: mmAsmT) on the AVX2 tiles: rows in groups of 6
// (the last group shorter, no padded copies), each across w/16 column
// strips, the reduction in chunks of avx2KChunk so that a row group's A
// and the chunk of B its strips read stay in L1 (B's 64-column panel rows
// give each 16-column strip a quarter of every cache line). Later chunks
// continue from C (modeAcc), so the chunks sum in one call's order, bit
// for bit.
func mmAVX2(trans bool, c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, w, mode int, scale []float32) {
	var sp *float32
	for k0 := 0; k0 == 0 || k0 < k; k0 += avx2KChunk {
		kc, md := min(avx2KChunk, k-k0), mode
		if k0 > 0 {
			md = modeAcc
		}
		for i := 0; i < m; i += 6 {
			r := min(6, m-i)
			if md == modeScale {
				sp = &scale[i]
			}
			ap := ptr(a, i*lda+k0)
			if trans {
				ap = ptr(a, k0*lda+i)
			}
			for j := 0; j < w; j += 16 {
				kernAVX2(r, trans, ap, lda, ptr(b, k0*ldb+j), ldb, kc, ptr(c, i*ldc+j), ldc, sp, md)
			}
		}
	}
}

// avx2KChunk is mmAVX2's reduction chunk: at 2048^3 on one core, in GFLOP per
// CPU-second, 128 gave 64-71 against 57-66 unchunked (256: 63-67; 64:
// 65-69), at 1024^3 89-96 against 77-97.
const avx2KChunk = 128

// rows8 spreads each constant over one 8-lane table row (32 bytes), as the
// AVX2 kernels read them.
func rows8(vals ...float32) [][8]float32 {
	t := make([][8]float32, len(vals))
	for i, v := range vals {
		for l := range t[i] {
			t[i][l] = v
		}
	}
	return t
}

// bias127 is the integer 127 (the float32 exponent bias) stored in a
// float32 table row, and bias127Field that bias in the exponent field.
var bias127, bias127Field = math.Float32frombits(127), math.Float32frombits(127 << 23)

var (
	expAVX2Consts = (*[13][8]float32)(rows8(append(expConsts[:11:11], 254, bias127)...))
	geluAVX2Table = (*[17][8]float32)(rows8(append(geluConsts[:], bias127)...))
	softmaxAVX2   = (*[11][8]float32)(rows8(append(softmaxExpConsts[:10:10], bias127Field)...))
)

//go:noescape
func expShiftAVX2(x *float32, n int, m float32, consts *[13][8]float32) float32

//go:noescape
func maxAVX2(x *float32, n int) float32

//go:noescape
func geluAVX2(x *float32, n int, consts *[17][8]float32)

//go:noescape
func geluTanhAVX2(u *float32, bias *float32, th *float32, gel *float32, n int, consts *[17][8]float32)

//go:noescape
func rampAVX2(x *float32, n int, base float32, slope float32, iota *[16]float32)

//go:noescape
func softmaxRowsAVX2(s *float32, nq int, m *float32, rs *float32, d *float32, consts *[11][8]float32)

//go:noescape
func softmaxRowsEntAVX2(s *float32, nq int, m *float32, rs *float32, d *float32, ent *float32, consts *[11][8]float32)

//go:noescape
func softmaxRowsOffAVX2(s *float32, nq int, m *float32, rs *float32, d *float32, a *float32, b *float32, consts *[11][8]float32)

//go:noescape
func softmaxRowsEntOffAVX2(s *float32, nq int, m *float32, rs *float32, d *float32, ent *float32, a *float32, b *float32, consts *[11][8]float32)

//go:noescape
func scaleMaxAVX2(x *float32, n int, s float32) float32

//go:noescape
func scaleAVX2(x *float32, n int, s float32)

//go:noescape
func addOffsetsAVX2(x *float32, b *float32, n int, a float32)

//go:noescape
func addAVX2(x *float32, y *float32, n int)

//go:noescape
func softmaxGradAVX2(ds *float32, p *float32, n int, rd float32, s float32)

//go:noescape
func mulAVX2(dst *float32, x *float32, y *float32, n int)

//go:noescape
func addMulAVX2(dst *float32, a *float32, b *float32, n int)

//go:noescape
func normScaleAVX2(nr *float32, ar *float32, x *float32, gain *float32, n int, inv float32)

//go:noescape
func normGradAVX2(xr *float32, nr *float32, n int, inv float32, dot float32)

//go:noescape
func normGradResAVX2(xr *float32, nr *float32, res *float32, n int, inv float32, dot float32)

//go:noescape
func rotPairsAVX2(u *float32, cos *float32, sin *float32, n int, signs *[16]float32)

//go:noescape
func rotRowsAVX2(dst *float32, ldd int, src *float32, lds int, cs *float32, ldc int, rows int, n int, scale float32, signs *[16]float32)

//go:noescape
func geluGradMulAVX2(du *float32, u *float32, th *float32, n int, consts *[4]float32)

//go:noescape
func negAbsAVX2(dst *float32, y *float32, n int)

//go:noescape
func siluFinishAVX2(sg *float32, w *float32, y *float32, n int)

//go:noescape
func siluGradMulAVX2(dy *float32, y *float32, sg *float32, n int)
