package export

import (
	"fmt"
	"regexp"
	"strconv"

	"routebench/interop/safetensors"
	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// An export's tensors carry the names and layouts of interop/torch/model.py's
// state_dict, so that model.load_state_dict(tensors, strict=True) takes
// them as they are: a user needs no map of ours. This file is that map's
// one home (docs/interop.md lists it for readers): routebench's
// block003/wq [in, out] (y = x W) becomes blocks.3.wq.weight [out, in],
// nn.Linear's layout (y = x W^T + b), and a bias joins its linear map
// (block003/b1 is blocks.3.w1.bias).

// torchRule says where one routebench tensor goes in the state_dict.
type torchRule struct {
	name      string // the state_dict name under its module
	transpose bool   // a linear map: [in, out] becomes nn.Linear's [out, in]
}

// topRules are the tensors outside the blocks.
var topRules = map[string]torchRule{
	"embed":              {"embed.weight", false}, // nn.Embedding: [V, D] as it is
	"unembed":            {"unembed.weight", true},
	"normf":              {"normf.weight", false},
	modelspec.AngleTable: {"angles", false},
}

// blockRules are a block's tensors, under blocks.<n>.
var blockRules = map[string]torchRule{
	"norm1": {"norm1.weight", false}, "norm2": {"norm2.weight", false},
	"wq": {"wq.weight", true}, "wk": {"wk.weight", true}, "wv": {"wv.weight", true}, "wo": {"wo.weight", true},
	"w1": {"w1.weight", true}, "b1": {"w1.bias", false},
	"w2": {"w2.weight", true}, "b2": {"w2.bias", false},
	modelspec.AngleProjName: {"angle_proj.weight", true},
	modelspec.PathDown:      {"wpath_down.weight", true},
	modelspec.PathUp:        {"wpath_up.weight", true},
	modelspec.PathConvW:     {"path_conv", false},
	modelspec.PathWBeta:     {"wbeta.weight", true}, modelspec.PathBBeta: {"wbeta.bias", false},
	modelspec.FoxWGate: {"wgate.weight", true}, modelspec.FoxBGate: {"wgate.bias", false},
	modelspec.KerpleP: {"kerple_p", false}, modelspec.KerpleA: {"kerple_a", false},
}

var blockName = regexp.MustCompile(`^block(\d{3})/(\w+)$`)

// torchRuleOf maps a routebench tensor name to its state_dict name.
func torchRuleOf(name string) (torchRule, error) {
	if r, ok := topRules[name]; ok {
		return r, nil
	}
	if m := blockName.FindStringSubmatch(name); m != nil {
		if r, ok := blockRules[m[2]]; ok {
			n, _ := strconv.Atoi(m[1])
			return torchRule{fmt.Sprintf("blocks.%d.%s", n, r.name), r.transpose}, nil
		}
	}
	return torchRule{}, fmt.Errorf("tensor %q has no name in interop/torch/model.py's state_dict: add it to interop/export/torch.go and to model.py", name)
}

// TorchTensors is set's tensors as model.py's state_dict holds them.
func TorchTensors(set *weights.Set) ([]safetensors.Tensor, error) {
	out := make([]safetensors.Tensor, len(set.Tensors))
	for i, t := range set.Tensors {
		r, err := torchRuleOf(t.Name)
		if err != nil {
			return nil, err
		}
		st := safetensors.Tensor{Name: r.name, Shape: t.Shape, Dtype: safetensors.F32, F32: t.Data}
		if r.transpose {
			if len(t.Shape) != 2 {
				return nil, fmt.Errorf("tensor %q has shape %v; a linear map is 2-D", t.Name, t.Shape)
			}
			rows, cols := t.Shape[0], t.Shape[1]
			tr := make([]float32, len(t.Data))
			for r := 0; r < rows; r++ {
				for c := 0; c < cols; c++ {
					tr[c*rows+r] = t.Data[r*cols+c]
				}
			}
			st.Shape, st.F32 = []int{cols, rows}, tr
		}
		out[i] = st
	}
	return out, nil
}
