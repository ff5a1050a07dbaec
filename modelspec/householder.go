package modelspec

// PaTH attention (Yang et al. 2025, arXiv 2505.16381) as its official code
// builds it (flash-linear-attention, fla/layers/path_attn.py and
// fla/ops/path_attn/), and PaTH-FoX, its combination with the forgetting
// gate of FoX (Lin et al. 2025). Per block, token t and head h:
//
//	z_t    = (a_t wpath_down) wpath_up                     a_t the normed block input, rank PathRank
//	y_t    = SiLU(sum_{k<PathConv} path_conv[k] * z_{t-k})  depthwise causal convolution (z_{<0} = 0)
//	w_t    = y_t[h] / sqrt(|y_t[h]|^2 + PathNormEps)        per head, L2-normalised
//	beta_t = 2 sigmoid(a_t wbeta + bbeta)[h]                in (0, 2): eigenvalue 1 - beta in (-1, 1)
//	H_t    = I - beta_t w_t w_t^T
//	s_ij   = (q_i^T H_i H_{i-1} ... H_{j+1} k_j + G_i - G_j) / sqrt(d),   j <= i
//	G_i    = sum_{t<=i} logsigmoid(a_t wgate + bgate)[h]    path-fox only
//
// Values are not transported. The choices, beside the official ones:
//   - rank 32 and a kernel of 3 with SiLU and no bias: the official defaults
//     (use_low_rank_w, use_w_shortconv, conv_size 3, conv_bias false);
//   - the gate sits inside the 1/sqrt(d) scale, as the official PaTH kernel
//     adds G_i - G_j before its sm_scale (parallel_path_fwd.py); FoX's own
//     code adds it after. With a zero bias the initial decay is
//     log 2 / sqrt(d) nats per token (0.12 at d = 32), not log 2;
//   - L2 epsilon 1e-6, fla's l2_norm default.
//
// Init (model/params.go): wpath_down, wpath_up, wbeta, wgate normal(0, 0.02)
// like every matrix; bbeta = 0 (beta = 1 at init, H_t a projection-like step
// with eigenvalue 0 along w_t, as the official zero bias gives); bgate = 0;
// path_conv uniform(-1/sqrt(K), 1/sqrt(K)), PyTorch's Conv1d default with
// fan-in K (depthwise), which the official model keeps.
const (
	PathRank    = 32   // low-rank bottleneck of the w projection
	PathConv    = 3    // causal short-convolution kernel
	PathNormEps = 1e-6 // L2-normalisation epsilon of w
)

// Tensor names of a block's PaTH and FoX parameters (under the block's
// prefix, e.g. block000/wbeta): the one spelling the weights files, both
// trainers and the evaluator share (ARCHITECTURE.md lists the shapes).
const (
	PathDown  = "wpath_down" // [D, PathRank]
	PathUp    = "wpath_up"   // [PathRank, D]
	PathConvW = "path_conv"  // [PathConv, D]: tap k multiplies z_{t-k}
	PathWBeta = "wbeta"      // [D, H]
	PathBBeta = "bbeta"      // [H]
	FoxWGate  = "wgate"      // [D, H]
	FoxBGate  = "bgate"      // [H]
)

// PathParams is the number of parameters PaTH adds to one block of width
// D with H heads (the forgetting gate included when gate is set).
func PathParams(D, H int, gate bool) int {
	n := D*PathRank + PathRank*D + PathConv*D + D*H + H
	if gate {
		n += D*H + H
	}
	return n
}

const (
	docPaTH = "PaTH: q_i^T H_i ... H_{j+1} k_j, H_t = I - beta_t w_t w_t^T, w_t = l2norm(SiLU(conv3(x W_32 W_up))), " +
		"beta_t = 2 sigmoid(.) in (0, 2); values untouched; +(2*32D + 3D + DH + H) parameters per block"
	docFoX = "; plus FoX's forgetting gate: logits += sum_{t=j+1..i} logsigmoid(.)_t per head, " +
		"inside the 1/sqrt(d) scale as PaTH's kernel; +(DH + H) per block"
)

// path is in the default set since both trainers train it (the native one
// at about 1.5x RoPE's step time on the CPU; stepspeed measures it).
func path() Variant {
	return Variant{Name: "path", Rotation: RotationNone, Householder: true, Doc: docPaTH}
}

// withForgetGate adds FoX's gate; "path" becomes "path-fox".
func (v Variant) withForgetGate() Variant {
	v.ForgetGate = true
	v.Name += "-fox"
	v.Doc += docFoX
	return v
}
