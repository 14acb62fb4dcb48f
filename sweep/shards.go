package sweep

import (
	"fmt"

	"github.com/leaselab/leaselab/internal/userfile"
)

// ReadShards reads the shards' result.json files at paths, each parsed by
// read (ReadResult for a sweep's, ReadExploreResult for a search's), for
// Merge or MergeExplore; a file that does not parse is named in the error.
// Only regular files are read (userfile.Read; no size limit: a result
// grows with its grid).
func ReadShards[T any](paths []string, read func([]byte) (T, error)) ([]T, error) {
	var out []T
	for _, p := range paths {
		data, err := userfile.Read(p, 0, "a result.json")
		if err != nil {
			return nil, err
		}
		r, err := read(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, r)
	}
	return out, nil
}
