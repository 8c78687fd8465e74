package volumemanager

import (
	"context"
	"sync"

	"github.com/minikubelet/minikubelet"
)

// TokenRunner makes the token manager's requests in `run`, beside the sync loop
// (docs/design/007-beside-the-loop.md): the kubelet's token manager is called from the volume
// manager's own goroutines (the reconciler's mount operations), so a slow API server delays the
// mount that waits for the token, never the sync loop.
//
// The TokenManager and the Manager stay cores of the goroutine that owns them (the sync loop's):
// a SetUp that needs a token queues an ask there and its volume waits; the Runner takes the asks
// through Do, makes each request on a goroutine of its own, and hands each answer back through
// Do, where the token is cached and the waiting mounts carry on.
type TokenRunner struct {
	tokens  *TokenManager
	volumes *Manager
	do      func(context.Context, func()) bool
	asked   minikubelet.Signal
}

// TokenRunnerOptions configure a TokenRunner.
type TokenRunnerOptions struct {
	// Tokens is the token manager, with a client. Required.
	Tokens *TokenManager
	// Volumes is the volume manager whose mounts ask Tokens. Required.
	Volumes *Manager
	// Do runs f on the goroutine that owns Tokens and Volumes and returns once f has run; false
	// when ctx ended first. Required.
	Do func(ctx context.Context, f func()) bool
}

// NewTokenRunner returns a TokenRunner, or an error wrapping ErrMissingOption. From then on the
// token manager's requests are asks the Runner makes: it must be called before the owner of the
// cores starts.
func NewTokenRunner(opts TokenRunnerOptions) (*TokenRunner, error) {
	var missing minikubelet.Missing
	missing.Check("Tokens", opts.Tokens == nil)
	missing.Check("Volumes", opts.Volumes == nil)
	missing.Check("Do", opts.Do == nil)
	if err := missing.Err("new token runner"); err != nil {
		return nil, err
	}
	r := &TokenRunner{tokens: opts.Tokens, volumes: opts.Volumes, do: opts.Do, asked: minikubelet.NewSignal()}
	opts.Tokens.beside, opts.Tokens.notify = true, r.asked.Notify
	return r, nil
}

// Run makes the requests until ctx is done, and returns nil once the requests in flight have
// returned (they see ctx cancelled).
func (r *TokenRunner) Run(ctx context.Context) error {
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	client := r.tokens.opts.Client
	for {
		var asks []tokenAsk
		if !r.do(ctx, func() { asks = r.tokens.takeAsks() }) {
			return nil
		}
		for _, a := range asks {
			inFlight.Go(func() {
				got, err := client.CreateToken(ctx, a.Namespace, a.Name, a.Request)
				r.do(ctx, func() {
					r.tokens.answer(tokenAnswer{Ask: a, Token: got, Err: err})
					r.volumes.mountWaiting(r.volumes.opts.Clock.Now())
				})
			})
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.asked:
		}
	}
}
