package modelspec

// learned-proj-qkv: accumulated rotations whose per-position angles are
// projected from the content in context rather than looked up by token id.
// Per block l, head h and pair p, with a^l_t the block's normed input (the
// RMSNorm(h) * norm1 that feeds wq, wk, wv):
//
//	theta^l_t = a^l_t W^l_ang          W^l_ang = block%03d/angle_proj, [D, H*P] (column h*P+p)
//	psi^l_t   = sum_{s<=t} theta^l_s   the route sum, as the table variants'
//
// q_t, k_t and v_t of block l are rotated by psi^l_t and the output by
// -psi^l_i (value transport), exactly as learned-qkv does with its table
// angles; there is no angle table, and each block has its own angles.
//
// Init: W_ang = 0, so the model starts as nope and must learn its own
// angles, like learned-*'s zero table; a small random init would instead
// start every block with content-dependent random rotations the training
// must first undo. The projection gets the learned table's angle learning
// rate (LearnedAngleLR through Variant.LRScale) for the same reason the
// table does: Adam moves each entry by about lr per step, and theta is a
// sum of D such entries times unit-scale inputs, so at the base rate the
// angles could barely leave zero within a cpu-profile run. It is not
// decayed (weight decay would pull the angles back to nope), like the
// table.

// AngleProjName is the tensor name of a block's angle projection (under
// the block's prefix: block000/angle_proj).
const AngleProjName = "angle_proj"

// AngleProjParams is the number of parameters the angle projection adds to
// one block of width D with H heads: D x H*P = D^2/2.
func AngleProjParams(D, H int) int { return D * H * (D / H / 2) }

const docProj = "q, k rotated by prefix sums psi^l_t = sum_{s<=t} a^l_s W^l_ang of a per-block projection of the normed block input " +
	"(content in context, not the token id), W^l_ang [D, H*P] initialised to 0 (the model starts as nope), angle learning rate x10, no angle table; " +
	"+D^2/2 parameters per block"

// learnedProj is named learned-proj-qk before value transport makes it
// learned-proj-qkv (the only form registered).
func learnedProj() Variant {
	return Variant{Name: "learned-proj-qk", Rotation: RotationAccumulated, AngleProj: true, AngleInit: AngleInitZero,
		AngleLR: LearnedAngleLR, Doc: docProj}.withValueTransport()
}
