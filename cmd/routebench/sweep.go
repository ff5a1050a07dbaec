package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"routebench/artifacts"
	"routebench/stages/study"
)

// cmdSweep runs every stage of a sweep not cached and exports its study
// (STUDY-<name>.md and its plots) into --out, beside RESULTS.md by default.
func cmdSweep(ctx context.Context, args []string) error {
	var file string
	c, err := parseCommonWith("sweep", args, func(fs *flag.FlagSet) { fs.StringVar(&file, "file", "", "sweep file") })
	if err != nil {
		return err
	}
	if len(c.args) > 0 {
		return fmt.Errorf("sweep takes no arguments (got %v); run one stage with `routebench run STAGE --sweep FILE`: %w", c.args, errUsage)
	}
	switch {
	case file == "" && c.sweep == "":
		return fmt.Errorf("sweep needs --file FILE (a sweep file, e.g. sweeps/smoke.json): %w", errUsage)
	case file != "" && c.sweep != "" && file != c.sweep:
		return fmt.Errorf("sweep: --file %s and --sweep %s name two sweeps; give one: %w", file, c.sweep, errUsage)
	case file != "":
		c.sweep = file
	}
	res, err := c.runAll(ctx, "")
	if err != nil {
		return err
	}
	art, ok := res.Artifacts[study.Kind]
	if !ok {
		return fmt.Errorf("sweep %s: no %s artifact after the run", c.sweep, study.Kind)
	}
	return exportStudy(art, c.outDir())
}

// exportStudy copies a sweep's study artifact (STUDY-<name>.md and its
// plots) into outDir and names the markdown it wrote; sweep and slurm
// --wait export it alike.
func exportStudy(art *artifacts.Artifact, outDir string) error {
	wrote, err := exportArtifact(art, outDir)
	if err != nil {
		return err
	}
	if err := removeStaleTables(wrote); err != nil {
		return err
	}
	for _, dst := range wrote {
		if filepath.Ext(dst) == ".md" {
			fmt.Fprintf(os.Stderr, "study: %s\n", dst)
		}
	}
	return nil
}
