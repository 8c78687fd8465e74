package sources

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	utilio "k8s.io/utils/io"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sources/staticpod"
)

const (
	// DefaultHTTPCheckFrequency is the kubelet's default httpCheckFrequency.
	DefaultHTTPCheckFrequency = 20 * time.Second
	// defaultHTTPTimeout is the total timeout of the kubelet's manifest URL client.
	defaultHTTPTimeout = 10 * time.Second
	// maxBodyInError caps how much of an unparsable body an error quotes.
	maxBodyInError = trace.MaxQuote
)

// HTTPOptions configures an HTTP source.
type HTTPOptions struct {
	// URL is the manifest URL (staticPodURL). Required.
	URL string
	// Header is sent with every request (staticPodURLHeader).
	Header http.Header
	// NodeName is the kubelet's node name.
	NodeName string
	// Period is the poll period (httpCheckFrequency). Zero means DefaultHTTPCheckFrequency.
	Period time.Duration
	// Client makes the requests. Nil means a client with defaultHTTPTimeout; replay passes one
	// with an in-process transport.
	Client *http.Client
	// Clock schedules polls. Required.
	Clock clock.PassiveClock
	// Tracer receives "set" and "error" events. Required; trace.Discard records nothing.
	Tracer trace.Tracer
}

func (o HTTPOptions) validate() error {
	var missing []string
	if o.URL == "" {
		missing = append(missing, "URL")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	return missingOptions(missing)
}

// HTTP is the manifest URL source: the kubelet's sourceURL without its goroutine. It remembers the
// last body it stored and sends a SET only when the bytes change, or an empty SET on an empty 200.
// It is not safe for concurrent use.
type HTTP struct {
	url      string
	header   http.Header
	nodeName string
	period   time.Duration
	client   *http.Client
	clock    clock.PassiveClock
	tracer   trace.Tracer

	data     []byte    // the last body stored, parsed or not
	nextPoll time.Time // period after the last poll finished; construction time before the first
}

// NewHTTP returns an HTTP source, or an error wrapping ErrMissingOption. The first poll is due
// at once.
func NewHTTP(opts HTTPOptions) (*HTTP, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("http source: %w", err)
	}
	if opts.Period <= 0 {
		opts.Period = DefaultHTTPCheckFrequency
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: defaultHTTPTimeout}
	}
	return &HTTP{
		url:      opts.URL,
		header:   opts.Header.Clone(),
		nodeName: opts.NodeName,
		period:   opts.Period,
		client:   opts.Client,
		clock:    opts.Clock,
		tracer:   opts.Tracer,
		nextPoll: opts.Clock.Now(),
	}, nil
}

// NextWake returns when the next poll is due: one period after the previous poll finished, as
// the kubelet's wait.Until does. There is no back-off after errors.
func (h *HTTP) NextWake() (time.Time, bool) { return h.nextPoll, true }

// Poll fetches the URL once: the kubelet's extractFromURL. The update, when not nil, is to be sent
// whatever the error. A failed request, a non-200 status or an invalid body sends nothing and
// keeps the previous pods. The body is stored before it is parsed, so repeating a body, good or
// bad, is a silent no-op (quirks Q1 and Q2).
func (h *HTTP) Poll(ctx context.Context) (*podconfig.Update, error) {
	defer func() { h.nextPoll = h.clock.Now().Add(h.period) }()
	u, err := h.extract(ctx)
	if err != nil {
		traceError(h.tracer, podconfig.HTTPSource, "extractFromURL", "RequestFailed", err)
	}
	return u, err
}

func (h *HTTP) extract(ctx context.Context) (*podconfig.Update, error) {
	const fn = "extractFromURL"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header = h.header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err // a *url.Error, which names the URL
	}
	defer resp.Body.Close()
	data, err := utilio.ReadAtMost(resp.Body, maxConfigLength)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{URL: h.url, Status: resp.Status, StatusCode: resp.StatusCode}
	}
	if len(data) == 0 {
		// Clears the http pods and marks the source seen, yet leaves the stored body alone.
		u := newSet(h.tracer, podconfig.HTTPSource, fn, nil)
		return u, fmt.Errorf("%w from %s", ErrEmptyBody, h.url)
	}
	if bytes.Equal(data, h.data) {
		return nil, nil
	}
	h.data = data

	opts := staticpod.Options{NodeName: h.nodeName, Source: h.url}
	pod, parsed, singleErr := staticpod.DecodePod(data, opts)
	if parsed {
		if singleErr != nil {
			return nil, fmt.Errorf("%s: %w", h.url, singleErr)
		}
		return newSet(h.tracer, podconfig.HTTPSource, fn, []*v1.Pod{pod}), nil
	}
	pods, parsed, listErr := staticpod.DecodePodList(data, opts)
	if parsed {
		if listErr != nil {
			return nil, fmt.Errorf("%s: %w", h.url, listErr)
		}
		// List order is kept: unlike a file SET it is already deterministic.
		return newSet(h.tracer, podconfig.HTTPSource, fn, pods), nil
	}
	body := data
	if len(body) > maxBodyInError {
		body = body[:maxBodyInError]
	}
	return nil, fmt.Errorf("%s: received '%s', but %w as single (%s) or multiple pods (%s)",
		h.url, body, ErrUnparsable, errorText(singleErr), errorText(listErr))
}
