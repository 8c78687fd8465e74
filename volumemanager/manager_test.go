package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// world is the volume manager's surroundings: the pod manager, the pod workers' answers, the
// secrets and config maps that exist, the token requests made and the events recorded.
type world struct {
	clk        *vclock.Clock
	pods       []*v1.Pod
	terminated map[types.UID]bool
	secrets    map[string]*v1.Secret
	configMaps map[string]*v1.ConfigMap
	tokens     []string
	events     []string
	trace      []string
}

func newWorld() *world {
	return &world{clk: vclock.New(vclock.Epoch), terminated: map[types.UID]bool{}, secrets: map[string]*v1.Secret{},
		configMaps: map[string]*v1.ConfigMap{"ns/kube-root-ca.crt": {Data: map[string]string{"ca.crt": "pem"}}}}
}

func (w *world) GetPods() []*v1.Pod { return w.pods }
func (w *world) GetPodByUID(uid types.UID) (*v1.Pod, bool) {
	for _, p := range w.pods {
		if p.UID == uid {
			return p, true
		}
	}
	return nil, false
}
func (w *world) ShouldPodContainersBeTerminating(uid types.UID) bool { return w.terminated[uid] }
func (w *world) ShouldPodRuntimeBeRemoved(uid types.UID) bool        { return w.terminated[uid] }

func (w *world) GetSecret(ns, name string) (*v1.Secret, error) {
	if s, ok := w.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

func (w *world) GetConfigMap(ns, name string) (*v1.ConfigMap, error) {
	if c, ok := w.configMaps[ns+"/"+name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("configmap"), name)
}

func (w *world) CreateToken(_ context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	w.tokens = append(w.tokens, fmt.Sprintf("%v %s/%s", w.clk.Since(vclock.Epoch), ns, name))
	out := tr.DeepCopy()
	out.Status = authenticationv1.TokenRequestStatus{Token: "t", ExpirationTimestamp: metav1.NewTime(w.clk.Now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))}
	return out, nil
}

func (w *world) Event(obj runtime.Object, eventType, reason, message string) {
	w.events = append(w.events, fmt.Sprintf("%v %s %s", w.clk.Since(vclock.Epoch), reason, message))
}

func (w *world) Emit(e trace.Event) {
	w.trace = append(w.trace, fmt.Sprintf("%v %s %s", w.clk.Since(vclock.Epoch), e.Event, e.Message))
}

// newManager builds a manager on w, with the token manager.
func newManager(t *testing.T, w *world) *Manager {
	t.Helper()
	tokens, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: w, Client: w, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Clock: w.clk, Tracer: w, Pods: w, States: w, Recorder: w, Secrets: w, ConfigMaps: w, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// secretPod is a pod whose container mounts the secret db and the kube-api-access volume.
func secretPod(uid string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p-" + uid, UID: types.UID(uid)},
		Spec: v1.PodSpec{
			ServiceAccountName: "default",
			Containers: []v1.Container{{Name: "app", VolumeMounts: []v1.VolumeMount{
				{Name: "creds", MountPath: "/creds"}, {Name: "kube-api-access-x", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"},
			}}},
			Volumes: []v1.Volume{
				{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db"}}},
				{Name: "unused", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "never-read"}}},
				{Name: "kube-api-access-x", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
					{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptrInt64(3607)}},
					{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}},
			},
		},
	}
}

func ptrInt64(v int64) *int64 { return &v }

// mountedWorld is a world whose secret ns/db exists, and a manager that mounted the volumes of a
// secretPod for each uid, one after the other.
func mountedWorld(t *testing.T, uids ...string) (*world, *Manager) {
	t.Helper()
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	m := newManager(t, w)
	for _, uid := range uids {
		pod := secretPod(uid)
		w.pods = append(w.pods, pod)
		m.PodsChanged()
		if _, err := run(t, w, m, m.WaitForAttachAndMount(pod), vclock.Epoch.Add(time.Minute), nil); err != nil {
			t.Fatal(err)
		}
	}
	return w, m
}

// run steps m at every wake until until, the way the sync loop does, and polls wait at its looks;
// it returns when the wait ended, and the wait's error.
func run(t *testing.T, w *world, m *Manager, wait *Wait, until time.Time, hooks map[time.Duration]func()) (time.Duration, error) {
	t.Helper()
	next, done, err := wait.Poll(false)
	for !done {
		at := next
		if wake, ok := m.NextWake(); ok && wake.Before(at) {
			at = wake
		}
		for d := range hooks {
			if h := vclock.Epoch.Add(d); h.After(w.clk.Now()) && h.Before(at) {
				at = h
			}
		}
		if at.After(until) {
			t.Fatalf("the wait did not end by %v", until.Sub(vclock.Epoch))
		}
		w.clk.Set(at)
		if hook, ok := hooks[at.Sub(vclock.Epoch)]; ok {
			hook()
		}
		m.Advance()
		if !at.Before(next) {
			next, done, err = wait.Poll(false)
		}
	}
	return w.clk.Since(vclock.Epoch), err
}

// TestMountAtTheNextPass checks a pod whose objects exist: its volumes are mounted at the first
// pass after it was added, the token requested then, and the wait ends at its first 300ms tick.
func TestMountAtTheNextPass(t *testing.T) {
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	m := newManager(t, w)
	w.clk.Set(vclock.Epoch.Add(1050 * time.Millisecond))
	pod := secretPod("a")
	w.pods = append(w.pods, pod)
	m.PodsChanged()
	wait := m.WaitForAttachAndMount(pod)
	ended, err := run(t, w, m, wait, vclock.Epoch.Add(time.Minute), nil)
	if err != nil || ended != 1350*time.Millisecond {
		t.Errorf("wait ended at %v with %v, want 1.35s and no error", ended, err)
	}
	want := []string{"1.1s mount creds", "1.1s token serviceaccount ns/default", "1.1s mount kube-api-access-x"}
	if diff := cmp.Diff(want, w.trace); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if got := m.PossiblyMounted(pod.UID); !cmp.Equal(got, []string{"creds", "kube-api-access-x"}) {
		t.Errorf("Mounted() = %v, want the two used volumes", got)
	}
}

// TestFailedMountBackOff checks the FailedMount cadence of a missing secret (500ms doubled at
// each failure, retried at the first pass after the back-off), and that the secret's creation
// is mounted at the next try, which the wait sees at its next tick.
func TestFailedMountBackOff(t *testing.T) {
	w := newWorld()
	m := newManager(t, w)
	w.clk.Set(vclock.Epoch.Add(1050 * time.Millisecond))
	pod := secretPod("a")
	w.pods = append(w.pods, pod)
	m.PodsChanged()
	wait := m.WaitForAttachAndMount(pod)
	hooks := map[time.Duration]func(){30 * time.Second: func() { w.secrets["ns/db"] = &v1.Secret{} }}
	ended, err := run(t, w, m, wait, vclock.Epoch.Add(time.Minute), hooks)
	if err != nil || ended != 33450*time.Millisecond {
		t.Errorf("wait ended at %v with %v, want 33.45s (the first tick after the mount at 33.2s)", ended, err)
	}
	msg := `FailedMount MountVolume.SetUp failed for volume "creds" : secret "db" not found`
	var want []string
	for _, at := range []string{"1.1s", "1.7s", "2.8s", "4.9s", "9s", "17.1s"} {
		want = append(want, at+" "+msg)
	}
	if diff := cmp.Diff(want, w.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := w.trace[len(w.trace)-1]; got != "33.2s mount creds" {
		t.Errorf("last trace event = %q, want the mount at 33.2s", got)
	}
}

// TestWaitTimesOut checks WaitForAttachAndMount's timeout and its message.
func TestWaitTimesOut(t *testing.T) {
	w := newWorld()
	m := newManager(t, w)
	w.clk.Set(vclock.Epoch.Add(1050 * time.Millisecond))
	pod := secretPod("a")
	w.pods = append(w.pods, pod)
	m.PodsChanged()
	wait := m.WaitForAttachAndMount(pod)
	ended, err := run(t, w, m, wait, vclock.Epoch.Add(5*time.Minute), nil)
	want := "unmounted volumes=[creds], unattached volumes=[], failed to process volumes=[]: context deadline exceeded"
	if ended != 124050*time.Millisecond || err == nil || err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait ended at %v with %v, want 2m4.05s and %q", ended, err, want)
	}
	if len(w.events) != 8 {
		t.Errorf("%d FailedMount events in 2m3s, want 8 (the last at 65.3s): %v", len(w.events), w.events)
	}
}

// TestWaitCanceled checks that a cancelled wait ends at once with the volumes it misses.
func TestWaitCanceled(t *testing.T) {
	w := newWorld()
	m := newManager(t, w)
	pod := secretPod("a")
	w.pods = append(w.pods, pod)
	m.PodsChanged()
	wait := m.WaitForAttachAndMount(pod)
	if _, done, _ := wait.Poll(false); done {
		t.Fatal("Poll() at once = done, want a wait")
	}
	_, done, err := wait.Poll(true)
	if !done || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "unmounted volumes=[creds kube-api-access-x], unattached volumes=[], failed to process volumes=[creds kube-api-access-x]") {
		t.Errorf("Poll(canceled) = %t, %v, want done with the volumes and context.Canceled", done, err)
	}
}

// TestUnmountOnTermination checks that a terminated pod's volumes are unmounted at the first pass
// after its worker's state changed, and that WaitForUnmount then ends at once.
func TestUnmountOnTermination(t *testing.T) {
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	m := newManager(t, w)
	pod := secretPod("a")
	w.pods = append(w.pods, pod)
	m.PodsChanged()
	if _, err := run(t, w, m, m.WaitForAttachAndMount(pod), vclock.Epoch.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	w.clk.Set(vclock.Epoch.Add(5 * time.Second))
	w.terminated[pod.UID] = true
	m.PodsChanged()
	w.clk.Set(vclock.Epoch.Add(5050 * time.Millisecond))
	m.Advance() // not due yet: the pass is at 5.1s
	w.clk.Set(vclock.Epoch.Add(5100 * time.Millisecond))
	m.Advance()
	if got := m.PossiblyMounted(pod.UID); len(got) != 0 {
		t.Errorf("Mounted() after the pass = %v, want nothing", got)
	}
	if _, done, err := m.WaitForUnmount(pod).Poll(false); !done || err != nil {
		t.Errorf("WaitForUnmount() = %t, %v, want done", done, err)
	}
	want := []string{"5.1s unmount creds", "5.1s unmount kube-api-access-x"}
	if diff := cmp.Diff(want, w.trace[len(w.trace)-2:]); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

// TestSetUpErrors checks the volume plugins' messages.
func TestSetUpErrors(t *testing.T) {
	optional := true
	for _, tc := range []struct {
		name string
		src  v1.VolumeSource
		want string
	}{
		{"missing config map", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}, `configmap "cfg" not found`},
		{"optional config map", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Optional: &optional}}, ""},
		{"missing config key", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []v1.KeyToPath{{Key: "nope", Path: "p"}}}},
			"configmap references non-existent config key: nope"},
		{"missing secret key", v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db", Items: []v1.KeyToPath{{Key: "pw", Path: "p"}}}}, "references non-existent secret key: pw"},
		{"projected, two missing", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "a"}}},
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "b"}}},
		}}}, `[configmap "a" not found, secret "b" not found]`},
		{"emptyDir", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			w.secrets["ns/db"] = &v1.Secret{}
			m := newManager(t, w)
			err := m.setUp(secretPod("a"), &desiredVolume{name: "v", source: tc.src})
			if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
				t.Errorf("setUp() = %v, want %q", err, tc.want)
			}
		})
	}
	standalone, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, Pods: newWorld(), States: newWorld()})
	if err != nil {
		t.Fatal(err)
	}
	if err := standalone.setUp(secretPod("a"), &desiredVolume{name: "creds", source: secretPod("a").Spec.Volumes[0].VolumeSource}); err == nil || err.Error() != "not supported due to running kubelet in standalone mode" {
		t.Errorf("standalone setUp() = %v", err)
	}
}

// TestTokenRefresh checks that a token is requested once, served from the cache, and requested
// again past 80% of its lifetime less the jitter.
func TestTokenRefresh(t *testing.T) {
	w := newWorld()
	tokens, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: trace.Discard, Client: w, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	req := func() *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrInt64(3607),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", Name: "p", UID: "a"}}}
	}
	for _, at := range []time.Duration{0, time.Minute, 47 * time.Minute, 48*time.Minute + 10*time.Second} {
		w.clk.Set(vclock.Epoch.Add(at))
		if _, err := tokens.GetServiceAccountToken("ns", "default", req()); err != nil {
			t.Fatal(err)
		}
	}
	// 80% of 3607s is 2885.6s, 48m5.6s; less a jitter of 0 to 9s.
	want := []string{"0s ns/default", "48m10s ns/default"}
	if diff := cmp.Diff(want, w.tokens); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
	tokens.DeleteServiceAccountToken("a")
	if _, err := tokens.GetServiceAccountToken("ns", "default", req()); err != nil || len(w.tokens) != 3 {
		t.Errorf("after DeleteServiceAccountToken: %v, %d requests, want a new request", err, len(w.tokens))
	}
	standalone, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: trace.Discard, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := standalone.GetServiceAccountToken("ns", "default", req()); err == nil || err.Error() != "failed to fetch token: cannot use TokenManager when kubelet is in standalone mode" {
		t.Errorf("standalone GetServiceAccountToken() = %v", err)
	}
}

// TestNewOptions checks the constructors' errors.
func TestNewOptions(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, minikubelet.ErrMissingOption) || !strings.Contains(err.Error(), "Clock, Tracer, Pods, States") {
		t.Errorf("New(Options{}) = %v", err)
	}
	if _, err := NewTokenManager(TokenOptions{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("NewTokenManager(TokenOptions{}) = %v", err)
	}
}

// TestNextWakeFollowsTheFailedVolumes checks the back-off wake through a pod's life: none
// before a failure, the retry after one, none once the retry mounted the volume or once the
// pod whose volume kept failing is gone (NextWake looks at the volumes' back-offs only while
// one has failed).
func TestNextWakeFollowsTheFailedVolumes(t *testing.T) {
	w := newWorld()
	m := newManager(t, w)
	pass := func(at time.Duration) {
		w.clk.Set(vclock.Epoch.Add(at))
		m.Advance()
	}
	wake := func() time.Duration {
		at, ok := m.NextWake()
		if !ok {
			return 0
		}
		return at.Sub(vclock.Epoch)
	}
	if got := wake(); got != 0 {
		t.Fatalf("NextWake() with no pod = %v, want none", got)
	}
	a, b := secretPod("a"), secretPod("b")
	w.pods = append(w.pods, a, b)
	m.PodsChanged()
	pass(100 * time.Millisecond) // both fail: the secret is missing
	if got, want := wake(), 700*time.Millisecond; got != want {
		t.Fatalf("NextWake() after the failures = %v, want the retry's pass %v", got, want)
	}
	w.secrets["ns/db"] = &v1.Secret{}
	w.terminated[b.UID] = true // b goes before its retry; a's retry mounts
	w.pods = w.pods[:1]        // b leaves the pod manager too: its unmounted volume stays desired while it is there
	m.PodsChanged()
	pass(700 * time.Millisecond)
	if got := wake(); got != 0 {
		t.Errorf("NextWake() once a mounted and b was removed = %v, want none", got)
	}
	delete(w.secrets, "ns/db")
	c := secretPod("c")
	w.pods = append(w.pods, c)
	m.PodsChanged()
	pass(800 * time.Millisecond)
	if got, want := wake(), 1400*time.Millisecond; got != want {
		t.Errorf("NextWake() after a new pod's failure = %v, want %v", got, want)
	}
}

// TestTerminatedPodKeepsItsUnmountedVolumes follows findAndRemoveDeletedPods for a pod whose
// runtime may be removed while the pod manager still has it (a terminated pod not yet deleted
// from the API, a pod rejected at admission before the first SyncKnownPods): its mounted volumes leave the desired state and are
// unmounted, but one that never mounted stays, and its mount is tried again at its back-off,
// with a FailedMount at each failure, until the pod leaves the pod manager; a retry that mounts
// it is undone at the pass after.
func TestTerminatedPodKeepsItsUnmountedVolumes(t *testing.T) {
	for _, tt := range []struct {
		name      string
		secretAt  time.Duration // when the secret appears; 0: never
		leavesAt  time.Duration // when the pod leaves the pod manager
		wantTrace []string
		wantFails []string
	}{
		{
			name: "leaves the pod manager", leavesAt: 1850 * time.Millisecond,
			wantTrace: []string{"100ms mount kube-api-access-x", "200ms unmount kube-api-access-x"},
			wantFails: []string{"100ms", "700ms", "1.8s"},
		},
		{
			name: "mounts at a retry", secretAt: 1 * time.Second, leavesAt: 5 * time.Second,
			wantTrace: []string{"100ms mount kube-api-access-x", "200ms unmount kube-api-access-x", "1.8s mount creds", "1.9s unmount creds"},
			wantFails: []string{"100ms", "700ms"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			m := newManager(t, w)
			a := secretPod("a")
			w.pods = append(w.pods, a)
			m.PodsChanged()
			step := func(until time.Duration) {
				for {
					at, ok := m.NextWake()
					if !ok || at.Sub(vclock.Epoch) > until {
						return
					}
					w.clk.Set(at)
					m.Advance()
				}
			}
			step(100 * time.Millisecond) // creds fails: the secret is missing
			w.clk.Set(vclock.Epoch.Add(150 * time.Millisecond))
			w.terminated[a.UID] = true
			m.PodsChanged()
			if tt.secretAt > 0 {
				step(tt.secretAt)
				w.secrets["ns/db"] = &v1.Secret{}
			}
			step(tt.leavesAt)
			w.clk.Set(vclock.Epoch.Add(tt.leavesAt))
			w.pods = nil
			m.PodsChanged()
			step(time.Hour)
			if at, ok := m.NextWake(); ok {
				t.Errorf("NextWake() once the pod left = %v, want none", at.Sub(vclock.Epoch))
			}
			trace := slices.DeleteFunc(slices.Clone(w.trace), func(s string) bool { return strings.Contains(s, " token ") })
			if diff := cmp.Diff(tt.wantTrace, trace); diff != "" {
				t.Errorf("mounts (-want +got):\n%s", diff)
			}
			var fails []string
			for _, e := range w.events {
				if strings.Contains(e, "FailedMount") {
					fails = append(fails, strings.Fields(e)[0])
				}
			}
			if diff := cmp.Diff(tt.wantFails, fails); diff != "" {
				t.Errorf("FailedMount events (-want +got):\n%s", diff)
			}
		})
	}
}
