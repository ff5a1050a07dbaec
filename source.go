// Package routebench embeds the module's own source, so that the pipeline
// can hash, at run time, exactly the code the running binary was built
// from (see pipeline/salt.go). It must import nothing else.
package routebench

import "embed"

// Source holds the packages whose code can change a stage's output (the
// third-party versions come from the binary's build info). Directories
// listed here must exist.
//
//go:embed artifacts internal pipeline stages model modelspec stats
var Source embed.FS
