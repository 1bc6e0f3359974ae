package format

import (
	"path"
	"strconv"
)

// Dimensions names arrays' axes for xarray, which opens a group's arrays
// as one Dataset only if axes of the same name have the same length: it
// remembers, per group, the length each name was given. The zero value
// is not ready: use make(Dimensions).
type Dimensions map[string]map[string]int64

// Name names the axes of the array at arrayPath (slash-separated, "" for
// a root array) of the given shape: the names given, where they agree
// with the lengths the group's arrays already give those names, else
// dim_<i>, or <array>_dim_<i> where dim_<i> already has another length.
func (d Dimensions) Name(arrayPath string, shape []int64, given []string) []string {
	g := path.Dir(arrayPath)
	if d[g] == nil {
		d[g] = map[string]int64{}
	}
	known := d[g]
	base := path.Base(arrayPath)
	if arrayPath == "" {
		base = "array"
	}
	names := make([]string, len(shape))
	for i, n := range shape {
		cands := []string{"dim_" + strconv.Itoa(i), base + "_dim_" + strconv.Itoa(i)}
		if len(given) == len(shape) && given[i] != "" {
			cands = append([]string{given[i]}, cands...)
		}
		for _, c := range cands {
			if l, ok := known[c]; !ok || l == n {
				names[i] = c
				break
			}
		}
		if names[i] == "" {
			names[i] = arrayPath + "_dim_" + strconv.Itoa(i)
		}
		known[names[i]] = n
	}
	return names
}
