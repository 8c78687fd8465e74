package kubeletserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// A response that lists the node's pods is as large as its pods, several megabytes with large
// ones, and json.Encoder builds all of it before writing a byte: a client that stops reading then
// holds the whole of it for as long as the write is allowed to block, and 300 such clients of
// /pods took the process from 137 MB to 1.29 GB. writeJSONList writes such a response as it
// encodes it instead, one item at a time, so that a stalled client holds one item's encoding
// and the server's write buffer (4 KiB); the items themselves belong to the shared snapshot.

// writeJSONList writes v, whose JSON field list holds n items, with the status code: the bytes
// json.Encoder writes for v with the items in place (a trailing newline included), each item
// made by item(i), encoded and written one at a time. v is encoded with an empty list in place
// of the items.
func writeJSONList(w http.ResponseWriter, code int, v any, list string, n int, item func(i int) any) {
	open, end, err := splitAtList(v, list)
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		// The values are the server's own; an encoding failure is a bug.
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "encode %s: %v\n", list, err)
		return
	}
	w.WriteHeader(code)
	if _, err := w.Write(open); err != nil {
		return // the client is gone or stalled: nothing more will reach it
	}
	for i := range n {
		b, err := json.Marshal(item(i))
		if err != nil {
			return
		}
		if i > 0 {
			b = append([]byte{','}, b...)
		}
		if _, err := w.Write(b); err != nil {
			return
		}
	}
	_, _ = w.Write(end)
}

// splitAtList encodes v, whose field list is an empty list, and returns what comes before the
// list's elements and what comes after them, newline included.
func splitAtList(v any, list string) (open, end []byte, err error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return nil, nil, err
	}
	b := buf.Bytes()
	marker := []byte(`"` + list + `":[]`)
	i := bytes.LastIndex(b, marker)
	if i < 0 {
		return nil, nil, fmt.Errorf("no empty %q list in %s", list, b)
	}
	cut := i + len(marker) - 1 // just before the closing bracket
	return b[:cut], b[cut:], nil
}
