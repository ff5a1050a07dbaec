package planner

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// --set key=value: one assignment becomes a JSON patch of the profile.

// Keys --set accepts are derived from Profile's JSON tags, so they cannot
// drift from what a --config file accepts: every leaf field by its dotted
// JSON path ("windows", "train.sigma_min", "theory.mixing.queries"; slices
// and maps are leaves), plus the bare JSON name of each training knob
// ("sigma_min" for train.sigma_min) unless that name also ends a path
// outside train: a top-level field wins ("backend" is not train.backend),
// and any other is rejected as ambiguous ("seed": train.seed or theory.seed?).
type setKeys struct {
	fields    map[string]reflect.Type // path -> the leaf's type
	aliases   map[string]string       // bare training knob -> train.<knob>
	ambiguous map[string][]string     // bare name -> the paths it could mean
}

// trainKey is the JSON name of Profile.Train, the struct the aliases reach into.
var trainKey = func() string {
	f, _ := reflect.TypeFor[Profile]().FieldByName("Train")
	return jsonName(f)
}()

func profileSetKeys() setKeys {
	k := setKeys{fields: map[string]reflect.Type{}, aliases: map[string]string{}, ambiguous: map[string][]string{}}
	walkJSON(reflect.TypeFor[Profile](), "", k.fields)
	for path := range k.fields {
		bare, ok := strings.CutPrefix(path, trainKey+".")
		if !ok || strings.Contains(bare, ".") {
			continue
		}
		var others []string
		for q := range k.fields {
			if q != path && (q == bare || strings.HasSuffix(q, "."+bare)) {
				others = append(others, q)
			}
		}
		if len(others) > 0 {
			k.ambiguous[bare] = append(others, path)
			sort.Strings(k.ambiguous[bare])
			continue
		}
		k.aliases[bare] = path
	}
	return k
}

// jsonName is the name encoding/json gives a struct field ("" for "-").
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name
	}
	return f.Name
}

// walkJSON records the leaves of struct type t under prefix.
func walkJSON(t reflect.Type, prefix string, out map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := jsonName(f)
		if name == "" {
			continue
		}
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct && !strings.Contains(f.Tag.Get("json"), ","):
			walkJSON(f.Type, prefix, out) // encoding/json flattens untagged embedded structs
		case f.Type.Kind() == reflect.Struct:
			walkJSON(f.Type, prefix+name+".", out)
		default:
			out[prefix+name] = f.Type
		}
	}
}

// valid lists every key --set accepts, for error messages.
func (k setKeys) valid() string {
	var names []string
	for p := range k.fields {
		names = append(names, p)
	}
	for a := range k.aliases {
		names = append(names, a)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// SetPatch turns one --set assignment ("train.sigma_min=0.1") into the JSON
// object a --config file would hold for it ({"train":{"sigma_min":0.1}}).
// The value is parsed by the field's type: a JSON literal of that type, or
// else plain text (a string; a comma-separated list for a slice of scalars,
// empty for an empty list; numbers like .5 that JSON lacks).
func SetPatch(assignment string) ([]byte, error) {
	key, raw, ok := strings.Cut(assignment, "=")
	if !ok || key == "" {
		return nil, fmt.Errorf("--set %q: want key=value, e.g. --set train.steps=200", assignment)
	}
	path, typ, err := resolveSetKey(key)
	if err != nil {
		return nil, err
	}
	val, err := parseSetValue(typ, raw)
	if err != nil {
		return nil, fmt.Errorf("--set %s: %s wants %s (e.g. --set %s=%s): %w", assignment, path, describeType(typ), key, exampleOf(typ), err)
	}
	var patch any = val
	segs := strings.Split(path, ".")
	for i := len(segs) - 1; i >= 0; i-- {
		patch = map[string]any{segs[i]: patch}
	}
	return json.Marshal(patch)
}

// resolveSetKey is the field a --set key names (its path and type), or the
// error that lists the valid keys.
func resolveSetKey(key string) (string, reflect.Type, error) {
	k := profileSetKeys()
	path := key
	if alias, ok := k.aliases[key]; ok {
		path = alias
	}
	typ, ok := k.fields[path]
	if !ok {
		if paths, amb := k.ambiguous[key]; amb {
			return "", nil, fmt.Errorf("--set: key %q is ambiguous (it could be %s); give the full path", key, strings.Join(paths, " or "))
		}
		return "", nil, fmt.Errorf("--set: unknown key %q (valid: %s)", key, k.valid())
	}
	return path, typ, nil
}

// parseSetValue is the JSON for raw as a value of type t.
func parseSetValue(t reflect.Type, raw string) (json.RawMessage, error) {
	if json.Unmarshal([]byte(raw), reflect.New(t).Interface()) == nil {
		return json.RawMessage(raw), nil
	}
	switch t.Kind() {
	case reflect.String:
		return json.Marshal(raw)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), t.Bits())
		if err != nil {
			return nil, err
		}
		return json.Marshal(f) // fails for Inf and NaN, which no knob takes
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return nil, err
		}
		return json.Marshal(b)
	case reflect.Slice:
		if isScalar(t.Elem()) {
			elems := []json.RawMessage{}
			if strings.TrimSpace(raw) != "" {
				for i, e := range strings.Split(raw, ",") {
					v, err := parseSetValue(t.Elem(), strings.TrimSpace(e))
					if err != nil {
						return nil, fmt.Errorf("element %d (%q): %w", i+1, e, err)
					}
					elems = append(elems, v)
				}
			}
			return json.Marshal(elems)
		}
	}
	// Unmarshal again for its message, which says what it found.
	return nil, json.Unmarshal([]byte(raw), reflect.New(t).Interface())
}

func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// describeType says in words what a value of t looks like.
func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Slice:
		if isScalar(t.Elem()) {
			return "a comma-separated list (each " + describeType(t.Elem()) + ") or a JSON array"
		}
	}
	return "JSON for a " + t.String()
}

// exampleOf is a value of t's shape for error messages.
func exampleOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "bytes"
	case reflect.Bool:
		return "true"
	case reflect.Float32, reflect.Float64:
		return "0.1"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "4"
	case reflect.Slice:
		switch e := t.Elem(); {
		case e.Kind() == reflect.String:
			return `rope,alibi or '["rope","alibi"]'`
		case isScalar(e):
			x := exampleOf(e)
			return x + "," + x + " or [" + x + "," + x + "]"
		}
		return "[...]"
	}
	return "{...}"
}
