package kubeletserver

import (
	"net/url"
	"testing"
)

// FuzzParseLogOptions: any query decodes or fails without panicking, and what it accepts is
// valid.
func FuzzParseLogOptions(f *testing.F) {
	for _, s := range []string{"follow=true&tailLines=3", "sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z", "tail=all", "limitBytes=-1", "previous=1&timestamps=t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		o, err := parseLogOptions(q)
		if err != nil {
			return
		}
		if o.sinceSeconds != nil && (*o.sinceSeconds < 1 || o.sinceTime != nil) {
			t.Errorf("accepted sinceSeconds %d with sinceTime %v", *o.sinceSeconds, o.sinceTime)
		}
		if o.tailLines != nil && *o.tailLines < 0 || o.limitBytes != nil && *o.limitBytes < 1 {
			t.Errorf("accepted tailLines %v limitBytes %v", o.tailLines, o.limitBytes)
		}
	})
}
