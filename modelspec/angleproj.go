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
// must first undo. The projection trains at the base learning rate, not
// the table's x10 (LearnedAngleLR): Adam moves each entry of W by about lr
// per step, and theta sums D of them times unit-scale inputs, so one step
// can turn an angle by up to ~D lr (0.2 rad at D = 128, lr 2e-3), where a
// table entry turns by lr; the table needs x10 to reach its angles, the
// projection does not. Measured at the smoke shape, 200 steps: at x10 the
// training was chaotic (the native trainer against itself at lr x(1+1e-6)
// drifted 5.5e-3 nats, learned-qkv's 1e-7), at x1 it drifts 9.5e-7 and
// the two trainers agree to 2.1e-6 like every other variant. It is not
// decayed (weight decay would pull the angles back to nope), like the
// table.

// AngleProjName is the tensor name of a block's angle projection (under
// the block's prefix: block000/angle_proj).
const AngleProjName = "angle_proj"

// AngleProjParams is the number of parameters the angle projection adds to
// one block of width D with H heads: D x H*P = D^2/2.
func AngleProjParams(D, H int) int { return D * H * (D / H / 2) }

const docProj = "q, k rotated by prefix sums psi^l_t = sum_{s<=t} a^l_s W^l_ang of a per-block projection of the normed block input " +
	"(content in context, not the token id), W^l_ang [D, H*P] initialised to 0 (the model starts as nope), at the base learning rate, no angle table; " +
	"+D^2/2 parameters per block"

// learnedProj is named learned-proj-qk before value transport makes it
// learned-proj-qkv (the only form registered).
func learnedProj() Variant {
	return Variant{Name: "learned-proj-qk", Rotation: RotationAccumulated, AngleProj: true, AngleInit: AngleInitZero,
		AngleLR: 1, Doc: docProj}.withValueTransport() // the base rate: see above
}
