package report

import (
	"image/color"
	"sort"
	"strings"

	"gonum.org/v1/plot/vg"

	"routebench/modelspec"
)

// The ratio plot colours a variant by its family, so that the families the
// claims compare can be told apart at a glance: the position-index and
// no-position baselines in greys, rotation of queries and keys only in
// blues, rotation that also transports the values in greens, a distance
// bias (with or without rotation) in oranges, PaTH's Householder transport
// in purples. Within a family the lines differ by dash pattern and marker.
type plotFamily struct {
	order  int
	name   string
	shades []color.RGBA
}

var (
	// Three greys: nope, rope and rope extended at inference (rope+yarn,
	// rope+pi, rope+ntk) are five lines, which two shades would draw alike.
	familyBaseline = plotFamily{0, "baselines (nope, rope, rope extended at inference)", []color.RGBA{{40, 40, 40, 255}, {130, 130, 130, 255}, {85, 85, 85, 255}}}
	familyRotQK    = plotFamily{1, "accumulated rotation of q, k", []color.RGBA{{31, 90, 180, 255}, {100, 160, 230, 255}, {20, 50, 110, 255}}}
	familyRotQKV   = plotFamily{2, "accumulated rotation with value transport", []color.RGBA{{30, 140, 60, 255}, {110, 200, 110, 255}, {15, 80, 35, 255}}}
	familyBias     = plotFamily{3, "distance bias (ALiBi, KERPLE)", []color.RGBA{{230, 120, 20, 255}, {250, 180, 80, 255}, {150, 70, 10, 255}}}
	familyPaTH     = plotFamily{4, "PaTH (Householder transport)", []color.RGBA{{120, 60, 170, 255}, {190, 120, 230, 255}, {70, 30, 110, 255}}}
)

// familyOf classifies a variant by its parts, never by its name; a name
// the registry does not know (a sweep's label) is drawn as a baseline. A
// run's name (variant@seedN) is its variant's, and an extension's
// (rope+yarn) its trained variant's.
func familyOf(name string) plotFamily {
	variant, _, _ := strings.Cut(name, "@")
	v, err := modelspec.LookupVariant(trainedVariant(variant))
	switch {
	case err != nil:
		return familyBaseline
	case v.Householder:
		return familyPaTH
	case v.ALiBi || v.KerpleLog:
		return familyBias
	case v.Rotation == modelspec.RotationAccumulated && v.ValueRot:
		return familyRotQKV
	case v.Rotation == modelspec.RotationAccumulated:
		return familyRotQK
	}
	return familyBaseline
}

// dashes cycle within a family: solid, dashed, dotted.
var familyDashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1.5), vg.Points(2.5)}}

// lineStyle is one series' colour and dash pattern.
type lineStyle struct {
	color  color.Color
	dashes []vg.Length
}

// familyStyles orders the variants by family (then by name) and gives each
// its family's next shade and dash pattern; it returns the order and the
// style of each name.
func familyStyles(variants []string) ([]string, map[string]lineStyle) {
	order := append([]string(nil), variants...)
	sort.SliceStable(order, func(i, j int) bool {
		fi, fj := familyOf(order[i]), familyOf(order[j])
		if fi.order != fj.order {
			return fi.order < fj.order
		}
		return order[i] < order[j]
	})
	styles := map[string]lineStyle{}
	seen := map[int]int{}
	for _, name := range order {
		f := familyOf(name)
		k := seen[f.order]
		seen[f.order]++
		styles[name] = lineStyle{color: f.shades[k%len(f.shades)], dashes: familyDashes[(k/len(f.shades)+k)%len(familyDashes)]}
	}
	return order, styles
}

// familySeries is one plot line per row, in family order with the
// family's style: name gives a row's variant, points fills its line.
func familySeries[R any](rows []R, name func(R) string, points func(R, *Series)) []Series {
	byName := map[string]R{}
	var names []string
	for _, r := range rows {
		byName[name(r)] = r
		names = append(names, name(r))
	}
	order, styles := familyStyles(names)
	var series []Series
	for _, n := range order {
		st := styles[n]
		s := Series{Name: n, style: &st}
		points(byName[n], &s)
		series = append(series, s)
	}
	return series
}
