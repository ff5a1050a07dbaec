//go:build !noxla

package model

import (
	"strings"
	"testing"
)

// The GPU binary's plugin errors (this file builds only without noxla, as
// `make test-xla` and the GPU bundle do): each names the plugin it tried
// and how to give one, and gomlx never auto-downloads one.
func TestXLAPluginErrors(t *testing.T) {
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", "")
	cases := []struct{ backend, want string }{
		{"xla", "no PJRT plugin given"},
		{"xla:cuda", "no PJRT plugin given"},
		{"xla:/nonexistent/xla_cuda_plugin.so", "PJRT plugin /nonexistent/xla_cuda_plugin.so: stat"},
		// gomlx options after a comma are not part of the path.
		{"xla:/nonexistent/xla_cuda_plugin.so,tf32", "PJRT plugin /nonexistent/xla_cuda_plugin.so: stat"},
	}
	for _, c := range cases {
		_, err := NewBackend(c.backend)
		if err == nil {
			t.Fatalf("%s: no error", c.backend)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "--backend xla:/abs/path/to/xla_cuda_plugin.so") {
			t.Errorf("%s: error %q lacks %q or the how-to", c.backend, msg, c.want)
		}
	}
}
