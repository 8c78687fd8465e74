package volumemanager

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// gatedTokens is an API server whose token requests for the service account "slow" wait for the
// gate, and whose requests for "broken" fail: a slow, then a failing, API server.
type gatedTokens struct {
	gate chan struct{}
	mu   sync.Mutex // guards asked
	// asked are the service accounts asked for, in the order the requests reached the server.
	asked []string
}

func (g *gatedTokens) CreateToken(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	g.mu.Lock()
	g.asked = append(g.asked, ns+"/"+name)
	g.mu.Unlock()
	if len(tr.Spec.Audiences) > 0 {
		name = tr.Spec.Audiences[0] // an audience gates or breaks its request as an account does
	}
	switch name {
	case "slow":
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "broken":
		return nil, errors.New("the server is unavailable")
	}
	out := tr.DeepCopy()
	out.Status = authenticationv1.TokenRequestStatus{Token: "t", ExpirationTimestamp: metav1.NewTime(vclock.Epoch.Add(time.Hour))}
	return out, nil
}

func (g *gatedTokens) requests() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.asked...)
}

// accountPod is secretPod with the service account sa.
func accountPod(uid, sa string) *v1.Pod {
	p := secretPod(uid)
	p.Spec.ServiceAccountName = sa
	return p
}

// owner is the goroutine that owns the cores (the sync loop's): it runs the calls it is given.
func owner(ctx context.Context, calls <-chan func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-calls:
			f()
		}
	}
}

// tokenRig is a volume manager whose token requests a TokenRunner makes, with the owner's
// goroutine and the Runner's running.
type tokenRig struct {
	w      *world
	m      *Manager
	client *gatedTokens
	do     func(ctx context.Context, f func()) bool
}

func newTokenRig(t *testing.T, ctx context.Context, wg *sync.WaitGroup) *tokenRig {
	t.Helper()
	client := &gatedTokens{gate: make(chan struct{})}
	r := newTokenRigWith(t, ctx, wg, client)
	r.client = client
	return r
}

// newTokenRigWith is newTokenRig with the API server client; the rig's client field is left nil.
func newTokenRigWith(t *testing.T, ctx context.Context, wg *sync.WaitGroup, client TokenClient) *tokenRig {
	t.Helper()
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	tokens, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: w, Client: client, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Clock: w.clk, Tracer: w, Pods: w, States: w, Recorder: w, Secrets: w, ConfigMaps: w, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	calls := make(chan func())
	do := func(ctx context.Context, f func()) bool {
		done := make(chan struct{})
		select {
		case calls <- func() { f(); close(done) }:
		case <-ctx.Done():
			return false
		}
		<-done
		return true
	}
	r, err := NewTokenRunner(TokenRunnerOptions{Tokens: tokens, Volumes: m, Do: do})
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { owner(ctx, calls) })
	wg.Go(func() {
		if err := r.Run(ctx); err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	})
	return &tokenRig{w: w, m: m, do: do}
}

// pass runs the volume manager's next pass on the owner's goroutine, at its wake.
func (r *tokenRig) pass(ctx context.Context) {
	r.do(ctx, func() {
		if at, ok := r.m.NextWake(); ok {
			r.w.clk.Set(at)
			r.m.Advance()
		}
	})
}

// TestTokenRequestBesideTheOwner: while one pod's token request hangs on the API server, the
// owner's goroutine keeps running passes, and another pod's volumes are mounted; the hung pod's
// projected volume waits (its wait looks every 300ms, as the kubelet's does), is not asked for
// again, and is mounted as soon as the answer comes back.
func TestTokenRequestBesideTheOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		r := newTokenRig(t, ctx, &wg)
		slow, fast := accountPod("a", "slow"), accountPod("b", "default")
		var waitA, waitB *Wait
		r.do(ctx, func() {
			r.w.clk.Set(vclock.Epoch.Add(1050 * time.Millisecond))
			r.w.pods = append(r.w.pods, slow)
			r.m.PodsChanged()
			waitA = r.m.WaitForAttachAndMount(slow)
		})
		r.pass(ctx)
		synctest.Wait() // a's request hangs on the API server
		r.do(ctx, func() {
			r.w.pods = append(r.w.pods, fast)
			r.m.PodsChanged()
			waitB = r.m.WaitForAttachAndMount(fast)
		})
		r.pass(ctx)
		synctest.Wait() // b's request was answered, and its mount carried on
		r.do(ctx, func() {
			r.m.ReprocessPod(slow.UID) // a SyncPod of a: its waiting volume is not tried again
		})
		r.pass(ctx)
		synctest.Wait()
		var next time.Time
		r.do(ctx, func() {
			if got := r.m.PossiblyMounted(fast.UID); !cmp.Equal(got, []string{"creds", "kube-api-access-x"}) {
				t.Errorf("b mounted %v while a's token hangs, want both its volumes", got)
			}
			if _, done, err := waitB.Poll(false); !done || err != nil {
				t.Errorf("b's wait = %t, %v, want done", done, err)
			}
			if got := r.m.PossiblyMounted(slow.UID); !cmp.Equal(got, []string{"creds"}) {
				t.Errorf("a mounted %v while its token hangs, want only creds", got)
			}
			var done bool
			next, done, _ = waitA.Poll(false)
			if now := r.w.clk.Now(); done || next.Sub(now) > MountRetryInterval {
				t.Errorf("a's wait = %t, next look in %v, want a look within 300ms", done, next.Sub(now))
			}
		})
		if got, want := r.client.requests(), []string{"ns/slow", "ns/default"}; !cmp.Equal(got, want) {
			t.Errorf("token requests %v, want %v: one each", got, want)
		}

		close(r.client.gate)
		synctest.Wait() // a's answer came back and its mount carried on
		r.do(ctx, func() {
			if got := r.m.PossiblyMounted(slow.UID); !cmp.Equal(got, []string{"creds", "kube-api-access-x"}) {
				t.Errorf("a mounted %v after its answer, want both its volumes", got)
			}
			r.w.clk.Set(next)
			if _, done, err := waitA.Poll(false); !done || err != nil {
				t.Errorf("a's wait at its next look = %t, %v, want done", done, err)
			}
			want := []string{
				"1.1s mount creds", "1.2s mount creds", "1.2s token serviceaccount ns/default", "1.2s mount kube-api-access-x",
				"1.3s token serviceaccount ns/slow", "1.3s mount kube-api-access-x",
			}
			if diff := cmp.Diff(want, r.w.trace); diff != "" {
				t.Errorf("trace (-want +got):\n%s", diff)
			}
		})
		cancel()
		wg.Wait()
	})
}

// TestFailedTokenAnswerBesideTheOwner: a failed request made beside the owner gives the same
// FailedMount event and back-off as one made at once.
func TestFailedTokenAnswerBesideTheOwner(t *testing.T) {
	pod := accountPod("a", "broken")
	// At once: the manager's own client fails the request in the pass.
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	tokens, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: w, Client: &gatedTokens{}, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Clock: w.clk, Tracer: w, Pods: w, States: w, Recorder: w, Secrets: w, ConfigMaps: w, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	w.pods = append(w.pods, pod)
	m.PodsChanged()
	at, _ := m.NextWake()
	w.clk.Set(at)
	m.Advance()
	wantEvents, wantTrace := w.events, w.trace
	wantWake, _ := m.NextWake()

	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		r := newTokenRig(t, ctx, &wg)
		r.do(ctx, func() {
			r.w.pods = append(r.w.pods, pod)
			r.m.PodsChanged()
		})
		r.pass(ctx)
		synctest.Wait()
		r.do(ctx, func() {
			if diff := cmp.Diff(wantEvents, r.w.events); diff != "" {
				t.Errorf("events beside the owner (-at once +beside):\n%s", diff)
			}
			if diff := cmp.Diff(wantTrace, r.w.trace); diff != "" {
				t.Errorf("trace beside the owner (-at once +beside):\n%s", diff)
			}
			if wake, _ := r.m.NextWake(); !wake.Equal(wantWake) {
				t.Errorf("next pass beside the owner at %v, want %v (the back-off)", wake.Sub(vclock.Epoch), wantWake.Sub(vclock.Epoch))
			}
		})
		cancel()
		wg.Wait()
	})
}

// TestFailureWhileAnotherTokenWaits: a projected volume with two tokens, whose first request
// fails while the second hangs beside the owner, reports the first's failure once the second has
// come back, in the FailedMount event a SetUp that asked for them one after the other gives.
func TestFailureWhileAnotherTokenWaits(t *testing.T) {
	pod := accountPod("a", "default")
	pod.Spec.Volumes[2].Projected.Sources = []v1.VolumeProjection{
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Audience: "broken", Path: "broken", ExpirationSeconds: ptrInt64(3607)}},
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Audience: "slow", Path: "slow", ExpirationSeconds: ptrInt64(3607)}},
	}
	// At once: both requests are made in the pass, the slow one answering at once.
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	open := make(chan struct{})
	close(open)
	tokens, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: w, Client: &gatedTokens{gate: open}, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Clock: w.clk, Tracer: w, Pods: w, States: w, Recorder: w, Secrets: w, ConfigMaps: w, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	w.pods = append(w.pods, pod)
	m.PodsChanged()
	at, _ := m.NextWake()
	w.clk.Set(at)
	m.Advance()
	wantEvents := w.events
	if len(wantEvents) == 0 {
		t.Fatal("no FailedMount event at once")
	}

	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		r := newTokenRig(t, ctx, &wg)
		r.do(ctx, func() {
			r.w.pods = append(r.w.pods, pod)
			r.m.PodsChanged()
		})
		r.pass(ctx)
		synctest.Wait() // the broken request has failed, the slow one hangs
		r.pass(ctx)
		r.pass(ctx)
		r.do(ctx, func() {
			if len(r.w.events) != 0 {
				t.Errorf("events while a token is still asked for: %v, want none", r.w.events)
			}
		})
		close(r.client.gate)
		synctest.Wait() // the slow answer is back: the waiting volume's SetUp completes
		r.do(ctx, func() {
			if diff := cmp.Diff(wantEvents, r.w.events); diff != "" {
				t.Errorf("events beside the owner (-at once +beside):\n%s", diff)
			}
		})
		// Each token was asked for once: the failure was kept while the other was in flight,
		// not forgotten and asked for again.
		if diff := cmp.Diff([]string{"ns/default", "ns/default"}, r.client.requests()); diff != "" {
			t.Errorf("token requests (-want +got):\n%s", diff)
		}
		cancel()
		wg.Wait()
	})
}

// TestDeletedPodDropsItsAnswer: an answer that comes back after the pod's tokens were deleted is
// not cached.
func TestDeletedPodDropsItsAnswer(t *testing.T) {
	w := newWorld()
	tokens, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: w, Client: &gatedTokens{}, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	tokens.beside, tokens.notify = true, func() {}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrInt64(3607),
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", Name: "p", UID: "a"}}}
	if _, err := tokens.GetServiceAccountToken("ns", "default", tr); !errors.Is(err, errTokenPending) {
		t.Fatalf("GetServiceAccountToken() beside = %v, want it pending", err)
	}
	asks := tokens.takeAsks()
	if len(asks) != 1 {
		t.Fatalf("asks = %d, want 1", len(asks))
	}
	tokens.DeleteServiceAccountToken("a")
	tokens.answer(tokenAnswer{Ask: asks[0], Token: tr})
	if len(tokens.cache)+len(tokens.inFlight)+len(tokens.failed) != 0 {
		t.Errorf("after the answer of a deleted pod: %d cached, %d in flight, %d failed, want none", len(tokens.cache), len(tokens.inFlight), len(tokens.failed))
	}
}

func TestNewTokenRunnerMissingOptions(t *testing.T) {
	if _, err := NewTokenRunner(TokenRunnerOptions{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("NewTokenRunner(TokenRunnerOptions{}) = %v, want ErrMissingOption", err)
	}
}

// TestRemovedWaitingPodForgetsItsAsk: a pod removed while its token request hangs, its volume
// never mounted, leaves nothing of the request behind, and the late answer is not cached.
func TestRemovedWaitingPodForgetsItsAsk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		r := newTokenRig(t, ctx, &wg)
		pod := accountPod("a", "slow")
		r.do(ctx, func() {
			r.w.pods = append(r.w.pods, pod)
			r.m.PodsChanged()
		})
		r.pass(ctx)
		synctest.Wait() // the request hangs
		r.do(ctx, func() {
			r.w.terminated[pod.UID] = true
			r.w.pods = nil // gone from the pod manager: a volume that never mounted stays desired while the pod is there
			r.m.PodsChanged()
		})
		r.pass(ctx)
		close(r.client.gate)
		synctest.Wait()
		r.do(ctx, func() {
			tokens := r.m.opts.Tokens.(*TokenManager)
			if n := len(tokens.cache) + len(tokens.inFlight) + len(tokens.failed); n != 0 {
				t.Errorf("after the pod went: %d cached, %d in flight, %d failed, want none", len(tokens.cache), len(tokens.inFlight), len(tokens.failed))
			}
		})
		cancel()
		wg.Wait()
	})
}

// scriptedTokens is an API server whose token requests each wait for the answer the test sends.
type scriptedTokens struct{ answers chan error }

func (s *scriptedTokens) CreateToken(ctx context.Context, _, _ string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	select {
	case err := <-s.answers:
		if err != nil {
			return nil, err
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := tr.DeepCopy()
	out.Status = authenticationv1.TokenRequestStatus{Token: "t", ExpirationTimestamp: metav1.NewTime(vclock.Epoch.Add(time.Hour))}
	return out, nil
}

// TestNoWakeWhileARetriedVolumeWaits: a volume whose mount failed, and whose retry after the
// back-off now waits for a token's answer beside the loop, is not due again before the answer
// comes: a pass has nothing to do for it, and a wake in the past would run passes back to back
// until the answer.
func TestNoWakeWhileARetriedVolumeWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		client := &scriptedTokens{answers: make(chan error)}
		r := newTokenRigWith(t, ctx, &wg, client)
		pod := accountPod("a", "default")
		r.do(ctx, func() {
			r.w.pods = append(r.w.pods, pod)
			r.m.PodsChanged()
		})
		r.pass(ctx) // the token is asked for
		synctest.Wait()
		client.answers <- errors.New("the server is unavailable")
		synctest.Wait() // the failure is back: FailedMount, and the back-off
		r.pass(ctx)     // the back-off expired: the token is asked for again
		synctest.Wait()
		r.do(ctx, func() {
			if len(r.w.events) != 1 {
				t.Errorf("events = %v, want the one FailedMount", r.w.events)
			}
			if at, ok := r.m.NextWake(); ok && !at.After(r.w.clk.Now()) {
				t.Errorf("next pass at %v, now %v, while the retried volume waits for its token: passes would run back to back", at.Sub(vclock.Epoch), r.w.clk.Now().Sub(vclock.Epoch))
			}
		})
		client.answers <- nil
		synctest.Wait()
		r.do(ctx, func() {
			if !r.m.isMounted(pod.UID, "kube-api-access-x") {
				t.Errorf("the projected volume is not mounted once the token came back")
			}
		})
		cancel()
		wg.Wait()
	})
}
