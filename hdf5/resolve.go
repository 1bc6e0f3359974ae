package hdf5

import (
	"errors"
	"github.com/mmapkit/mmapkit/format"
	"path"
	"sort"
	"strings"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// clean makes name an absolute object path: "x" and "/x" are the same.
func clean(name string) string {
	return path.Clean("/" + name)
}

// resolve finds the dataset a name stands for: its first path, a second
// hard link, or a path through soft links (at most 16 of them). An
// external link, a dangling soft link or a group is an error naming it.
func (f *File) resolve(name string) (*dataset, error) {
	if f.closed {
		return nil, errAt(f.name, -1, mmapfile.ErrClosed, "dataset %q", name)
	}
	if d := f.byPath[name]; d != nil {
		return d, nil // a first path as the walk wrote it: clean costs an allocation
	}
	p := clean(name)
	if d := f.byPath[p]; d != nil {
		return d, nil
	}
	hops := 0
	first, err := f.canonical(p, &hops)
	if err != nil {
		return nil, err
	}
	if d := f.byPath[first]; d != nil {
		return d, nil
	}
	if _, ok := f.groupAt[first]; ok {
		return nil, errAt(f.name, -1, format.ErrNoRecord, "%s is a group, not a dataset", p)
	}
	return nil, errAt(f.name, -1, format.ErrNoRecord, "%s is not a dataset (a committed datatype?)", p)
}

// canonical returns the first path of the object at p, following links.
func (f *File) canonical(p string, hops *int) (string, error) {
	if p == "/" {
		return "/", nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	for i, part := range parts {
		links, ok := f.groupAt[cur]
		if !ok {
			return "", errAt(f.name, -1, format.ErrNoRecord, "%s: %s is not a group", p, cur)
		}
		k := sort.Search(len(links), func(j int) bool { return links[j].name >= part })
		if k == len(links) || links[k].name != part {
			return "", errAt(f.name, -1, format.ErrNoRecord, "%s: no %q in %s", p, part, cur)
		}
		l := &links[k]
		here := path.Join(cur, part)
		switch l.typ {
		case linkHard:
			next, ok := f.objects[l.addr]
			if !ok {
				return "", errAt(f.name, l.at, format.ErrNoRecord, "%s: %s leads to an object the walk did not reach", p, here)
			}
			cur = next
		case linkSoft:
			if *hops++; *hops > maxSoftHops {
				return "", errAt(f.name, l.at, ErrCycle, "%s: more than %d soft links to follow (a cycle?)", p, maxSoftHops)
			}
			target := l.target
			if !strings.HasPrefix(target, "/") {
				target = path.Join(cur, target)
			}
			next, err := f.canonical(clean(target), hops)
			if errors.Is(err, ErrCycle) || errors.Is(err, ErrExternalLink) {
				return "", err
			}
			if err != nil {
				return "", errAt(f.name, l.at, format.ErrNoRecord, "%s is a dangling soft link to %s", here, l.target)
			}
			cur = next
		case linkExternal:
			return "", errAt(f.name, l.at, ErrExternalLink, "%s is an external link to %s:%s; external links are not followed", here, l.file, l.target)
		default:
			return "", errAt(f.name, l.at, format.ErrNoRecord, "%s is a user-defined link of type %d, which is not followed", here, l.typ)
		}
		if i < len(parts)-1 {
			if _, ok := f.groupAt[cur]; !ok {
				return "", errAt(f.name, -1, format.ErrNoRecord, "%s: %s is not a group", p, here)
			}
		}
	}
	return cur, nil
}
