package planner

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// DefaultsTable is the README's table of every profile knob: one row per
// key --set accepts (its dotted JSON path), one column per built-in
// profile, each cell the profile's default value. It is generated from the
// profile table, so the README cannot drift from it (TestREADMEDefaults).
func DefaultsTable() string {
	names := ProfileNames()
	values := map[string]map[string]any{}
	for _, n := range names {
		p := builtin()[n]
		b, err := json.Marshal(p)
		if err != nil {
			panic(fmt.Sprintf("planner: profile %s does not encode: %v", n, err)) // a Profile field that JSON cannot hold is a bug
		}
		var tree map[string]any
		if err := json.Unmarshal(b, &tree); err != nil {
			panic(err)
		}
		values[n] = tree
	}
	var paths []string
	for p := range profileSetKeys().fields {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var sb strings.Builder
	sb.WriteString("| key | " + strings.Join(names, " | ") + " |\n|---|" + strings.Repeat("---|", len(names)) + "\n")
	for _, path := range paths {
		row := []string{"`" + path + "`"}
		for _, n := range names {
			row = append(row, cell(lookupPath(values[n], path)))
		}
		sb.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	return sb.String()
}

// lookupPath walks a decoded JSON object along a dotted path.
func lookupPath(tree map[string]any, path string) any {
	var cur any = tree
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// cell renders one default: strings bare, empty values as a dash (the
// field's documented empty meaning applies), anything else as JSON.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		if x == "" {
			return "-"
		}
		if len(x) > 40 {
			return "(" + fmt.Sprint(len(x)) + " characters)"
		}
		return x
	case []any:
		if len(x) == 0 {
			return "-"
		}
	}
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), "|", `\|`)
}
