package sources

import (
	"errors"
	"fmt"
	"strings"

	utilio "k8s.io/utils/io"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sources/staticpod"
)

// maxConfigLength is the kubelet's maxConfigLength (config/common.go): a manifest file or HTTP
// body of this many bytes or more is refused with ErrTooLarge.
const maxConfigLength = 10 << 20

var (
	// ErrPathNotExist is returned, together with an empty SET, when the static pod path does not
	// exist. The watch loop treats it as retryable: it retries every second without backing off.
	ErrPathNotExist = errors.New("path does not exist, ignoring")
	// ErrTooLarge is returned for a manifest file or HTTP body of 10 MiB or more.
	ErrTooLarge = utilio.ErrLimitReached
	// ErrNotRegular is returned for a path in the static pod directory that is not a regular
	// file when the source reads it (a FIFO, a device, a socket): it is never opened for real.
	ErrNotRegular = errors.New("not a regular file")
	// ErrUnparsable marks input that is not a v1 Pod (nor, for http, a v1 PodList) at all.
	ErrUnparsable = errors.New("couldn't parse")
	// ErrNotInCache is returned when a delete event names a file whose pod is no longer stored.
	ErrNotInCache = errors.New("doesn't exist in cache")
	// ErrEmptyBody is returned, together with an empty SET, when the manifest URL answers 200
	// with no body.
	ErrEmptyBody = errors.New("zero-length data received")
)

// missingOptions returns nil when missing is empty, or else an error wrapping ErrMissingOption
// that names the missing options.
func missingOptions(missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
}

// maxErrorQuote caps how much of a decoder's error, which can quote the input it choked on, an
// error of this package repeats: the trace's one cap on quoted input. A 10 MiB manifest would
// otherwise make a 10 MiB error, trace line and log line at every relist.
const maxErrorQuote = trace.MaxQuote

// errorText is err's text cut to maxErrorQuote bytes, saying how much was left out.
func errorText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return trace.Quote(err.Error())
}

// StatusError is returned when the manifest URL answers with a status other than 200 OK.
type StatusError struct {
	URL        string
	Status     string // the status line, for example "404 Not Found"
	StatusCode int
}

// Error returns "<url>: <status line>", the kubelet's text.
func (e *StatusError) Error() string { return fmt.Sprintf("%s: %s", e.URL, e.Status) }

// reason classifies err for the trace's Reason field; fallback names anything unclassified.
func reason(err error, fallback string) string {
	var status *StatusError
	switch {
	case errors.Is(err, ErrPathNotExist):
		return "PathMissing"
	case errors.Is(err, ErrTooLarge):
		return "TooLarge"
	case errors.Is(err, staticpod.ErrInvalidPod), errors.Is(err, staticpod.ErrAPIReference):
		return "InvalidManifest"
	case errors.Is(err, ErrUnparsable):
		return "UnparsableManifest"
	case errors.Is(err, ErrNotInCache):
		return "NotInCache"
	case errors.Is(err, ErrEmptyBody):
		return "EmptyBody"
	case errors.As(err, &status):
		return "BadStatus"
	}
	return fallback
}
