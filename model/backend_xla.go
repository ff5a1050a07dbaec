//go:build !noxla

package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/xla"
)

// This file exists only in builds without the noxla tag (the GPU binary,
// `make gpu-binary`): it registers gomlx's XLA backend behind the
// XLABackend hook, with gomlx's plugin auto-download disabled, because a
// run must never fetch anything. The user names the PJRT plugin.
func init() {
	xla.EnableAutoInstall(false)
	XLABackend = newXLABackend
}

// newXLABackend opens the PJRT plugin named by config: an absolute path to
// the plugin .so, or a plugin name ("cuda") searched under
// PJRT_PLUGIN_LIBRARY_PATH, optionally followed by gomlx's comma-separated
// options ("/abs/path/xla_cuda_plugin.so,tf32").
func newXLABackend(config string) (backends.Backend, error) {
	const how = "name it with --backend xla:/abs/path/to/xla_cuda_plugin.so (or GOMLX_BACKEND), " +
		"or set PJRT_PLUGIN_LIBRARY_PATH to the directory holding pjrt_c_api_<name>_plugin.so"
	plugin, _, _ := strings.Cut(config, ",")
	switch {
	case filepath.IsAbs(plugin):
		if _, err := os.Stat(plugin); err != nil {
			return nil, fmt.Errorf("XLA: PJRT plugin %s: %w; %s", plugin, err, how)
		}
	case os.Getenv("PJRT_PLUGIN_LIBRARY_PATH") == "":
		return nil, fmt.Errorf("XLA: no PJRT plugin given (config %q, PJRT_PLUGIN_LIBRARY_PATH unset); %s", config, how)
	}
	return xla.New(config)
}
