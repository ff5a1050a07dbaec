//go:build amd64 && !purego

package native

// 4-row tiles (kern_amd64.s, gen_kern_amd64.go) for the last rows of a
// 64-row block (64 = 10*6 + 4 = 5*12 + 4), in both layouts of A: mmTail
// copied those 4 rows into zero-padded 6-row buffers and ran a 6-row tile,
// ~14% of a PaTH evaluation at L = 1,024 (its products are all 64-row
// blocks), and mmTailT 3% of a PaTH training step at T = 512. Each row's
// sums run in the same order as in the 6- and 12-row tiles, so results do
// not change, only the time.

//go:noescape
func kern4x64(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern4x32(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

// kern4 calls the 4-row kernel of width w directly (see kern6).
func kern4(w int, a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int) {
	if w == 32 {
		kern4x32(a, lda, b, ldb, k, c, ldc, scale, mode)
	} else {
		kern4x64(a, lda, b, ldb, k, c, ldc, scale, mode)
	}
}

//go:noescape
func kern4x64T(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern4x32T(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

// kern4T is kern4 with A stored transposed.
func kern4T(w int, a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int) {
	if w == 32 {
		kern4x32T(a, lda, b, ldb, k, c, ldc, scale, mode)
	} else {
		kern4x64T(a, lda, b, ldb, k, c, ldc, scale, mode)
	}
}
