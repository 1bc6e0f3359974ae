package csvtable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// textSource is an i32 array "n" beside a text array "s" of the same
// length, whose ReadText gives batches of 7 and may end early or fail.
type textSource struct {
	format.Source
	text []string
	fail error // returned after the first batch
}

func (s *textSource) ReadText(i int, fn func([]string) error) error {
	for k := 0; k < len(s.text); k += 7 {
		if s.fail != nil && k > 0 {
			return s.fail
		}
		if err := fn(s.text[k:min(k+7, len(s.text))]); err != nil {
			return err
		}
	}
	return nil
}

func newTextSource(rows, texts int, fail error) *textSource {
	nums := make([]byte, 4*rows)
	text := make([]string, texts)
	for k := range rows {
		binary.LittleEndian.PutUint32(nums[4*k:], uint32(k))
	}
	for k := range text {
		text[k] = fmt.Sprintf("t,%d", k)
	}
	recs := []format.Record{
		{Array: layout.Array{Name: "n", Type: layout.I32, Shape: []int64{int64(rows)}}},
		{Array: layout.Array{Name: "s", Shape: []int64{int64(rows)}, Size: -1}, TypeName: "string", Kind: format.KindOpaque},
	}
	return &textSource{Source: format.Memory(recs, [][]byte{nums}), text: text, fail: fail}
}

func TestEncodeTextArrays(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name        string
		rows, texts int
		fail        error
		err         string
	}{
		{"past the batches", 40000, 40000, nil, ""},
		{"empty", 0, 0, nil, ""},
		{"text ends early", 20, 10, nil, `record "s": its text ended after 10 of its values were due`},
		{"text fails", 40000, 40000, boom, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Encode(&b, newTextSource(tc.rows, tc.texts, tc.fail))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			var want strings.Builder
			want.WriteString("n,s\n")
			for k := range tc.rows {
				fmt.Fprintf(&want, "%d,\"t,%d\"\n", k, k)
			}
			assert.Equal(t, want.String(), b.String())
		})
	}
}
