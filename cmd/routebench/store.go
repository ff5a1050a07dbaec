package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"routebench/artifacts"
)

// errStoreShared is store check's verdict on a group store with
// directories a member cannot write (its exit status is 1).
var errStoreShared = errors.New("store check found directories a group member cannot write")

// cmdStore is `routebench store check`: whether every member of a group
// store's group can write every directory in it (docs/cluster.md).
func cmdStore(args []string) error {
	if len(args) == 0 || args[0] != "check" {
		return fmt.Errorf("store needs a subcommand: store check [--store DIR]: %w", errUsage)
	}
	c, err := parseCommon("store check", args[1:])
	if err != nil {
		return err
	}
	if len(c.args) > 0 {
		return fmt.Errorf("store check takes no arguments (got %v); name the store with --store: %w", c.args, errUsage)
	}
	check, err := artifacts.CheckShared(c.storeDir())
	if err != nil {
		return err
	}
	return printStoreCheck(os.Stdout, check)
}

// printStoreCheck writes the check's findings and fix; it returns
// errStoreShared when a group store has problems.
func printStoreCheck(w io.Writer, c *artifacts.ShareCheck) error {
	group := artifacts.GroupName(c.GID)
	if !c.Group {
		fmt.Fprintf(w, "store %s is one user's (mode %v, group %s not allowed to write): nothing to check.\n", c.Root, c.RootMode, group)
		fmt.Fprintf(w, "to share it with a group (docs/cluster.md, \"Many users, one store\"): %s, then every user works under umask 002\n", c.Fix())
		return nil
	}
	fmt.Fprintf(w, "store %s: a group store (group %s, mode %v)\n", c.Root, group, c.RootMode)
	if len(c.Problems) == 0 {
		fmt.Fprintf(w, "every directory is writable by group %s and stays in it\n", group)
		return nil
	}
	owners := map[string]bool{}
	var names []string
	for _, p := range c.Problems {
		owner := artifacts.UserName(p.UID)
		if p.Mode == 0 {
			fmt.Fprintf(w, "  %s  %s\n", p.Dir, p.Issue)
			continue
		}
		fmt.Fprintf(w, "  %s  %v owner %s group %s: %s\n", p.Dir, p.Mode, owner, artifacts.GroupName(p.GID), p.Issue)
		if !owners[owner] {
			owners[owner] = true
			names = append(names, owner)
		}
	}
	fmt.Fprintf(w, "%d directories a member of group %s cannot write, or whose new directories would leave the group: a member's command fails there with \"permission denied\".\n", len(c.Problems), group)
	fmt.Fprintf(w, "fix, as their owner (%v) or root: %s\n", names, c.Fix())
	return errStoreShared
}
