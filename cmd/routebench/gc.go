package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"routebench/artifacts"
	"routebench/pipeline"
	"routebench/planner"
)

// gcOptions are gc's own flags.
type gcOptions struct {
	// olderThan > 0: run logs older than this stop being roots and are
	// deleted (their artifacts go with this gc; a log left behind would
	// name artifacts that no longer exist).
	olderThan time.Duration
	expire    bool // --older-than was given (0s expires every log)
	// all: only the built-in profiles' live keys are roots; run logs are
	// neither read nor deleted.
	all bool
}

func cmdGC(args []string) error {
	var o gcOptions
	c, err := parseCommonWith("gc", args, func(fs *flag.FlagSet) {
		fs.Func("older-than", "run logs older than this stop being roots", func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("%q is not a duration like 72h or 30m", v)
			}
			o.olderThan, o.expire = d, true
			return nil
		})
		fs.BoolVar(&o.all, "all", false, "keep only the built-in profiles' current keys")
	})
	if err != nil {
		return err
	}
	if len(c.args) > 0 {
		return fmt.Errorf("gc takes no stage names (got %v): %w", c.args, errUsage)
	}
	if err := c.refuseSweep("gc"); err != nil {
		return err // gc keeps what built-in profiles and run logs name; a sweep's runs are in the logs
	}
	if o.all && o.expire {
		return fmt.Errorf("gc: --all already ignores every run log; drop --older-than: %w", errUsage)
	}
	r, _, err := c.setup()
	if err != nil {
		return err
	}
	var plans []*pipeline.Plan
	for _, name := range planner.ProfileNames() {
		prof, err := planner.LoadProfile(name, "")
		if err != nil {
			return err
		}
		p, err := planner.Build(prof)
		if err != nil {
			return err
		}
		plans = append(plans, p)
	}
	live, err := r.LiveKeys(plans...)
	if err != nil {
		return err
	}
	return collectGarbage(r.Store, live, o, time.Now(), os.Stdout)
}

// collectGarbage removes everything of the store but the live keys (the
// built-in profiles') and, unless o.all, what the run logs name, and says
// what it kept and why. The run logs are read under gc's lock (GCWith); a
// log that cannot be read makes gc refuse and remove nothing.
func collectGarbage(store *artifacts.Store, live map[artifacts.ActionID]bool, o gcOptions, now time.Time, w io.Writer) error {
	var roots *pipeline.RunRoots
	st, err := store.GCWith(func() (func(artifacts.ActionID) bool, error) {
		if o.all {
			return func(a artifacts.ActionID) bool { return live[a] }, nil
		}
		var cutoff time.Time
		if o.expire {
			cutoff = now.Add(-o.olderThan)
		}
		var err error
		if roots, err = pipeline.LoadRunRoots(store.Root(), cutoff); err != nil {
			return nil, err
		}
		return func(a artifacts.ActionID) bool { return live[a] || roots.Keys[a] }, nil
	})
	if err != nil {
		return err
	}
	why := fmt.Sprintf("%d live in the built-in profiles (%s)", len(live), strings.Join(planner.ProfileNames(), ", "))
	switch {
	case o.all:
		why += "; run logs ignored (--all)"
	default:
		extra := 0
		for a := range roots.Keys {
			if !live[a] {
				extra++
			}
		}
		why += fmt.Sprintf(", %d more named by %d run logs", extra, len(roots.Logs))
	}
	if roots != nil && len(roots.Expired) > 0 {
		removed := 0
		for _, p := range roots.Expired {
			if err := os.Remove(p); err == nil {
				removed++
			}
		}
		why += fmt.Sprintf("; %d run logs older than %s expired, %d of them deleted", len(roots.Expired), o.olderThan, removed)
	}
	fmt.Fprintf(w, "gc: roots: %s\n", why)
	fmt.Fprintf(w, "gc: kept %d entries; removed %d entries, %d blobs (%d bytes), %d work dirs\n", st.Kept, st.Entries, st.Blobs, st.Bytes, st.WorkDirs)
	return nil
}
