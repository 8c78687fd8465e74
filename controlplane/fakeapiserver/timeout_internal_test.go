package fakeapiserver

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestTimeoutSecondsNeverWrapsNegative(t *testing.T) {
	tests := []struct {
		query string
		want  time.Duration
	}{
		{"timeoutSeconds=30", 30 * time.Second},
		{"timeoutSeconds=0", 0},
		{"timeoutSeconds=9223372036854775807", 100 * 365 * 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/v1/pods?watch=1&"+tt.query, nil)
			opts, err := parseListOptions(r, target{res: podResource()})
			if err != nil {
				t.Fatalf("parseListOptions(%s) error = %v", tt.query, err)
			}
			if opts.timeout != tt.want {
				t.Errorf("parseListOptions(%s).timeout = %v, want %v", tt.query, opts.timeout, tt.want)
			}
		})
	}
}
