package volumemanager

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// kubeletTokenKey is the kubelet's keyFunc as it formats the key, with fmt.
func kubeletTokenKey(name, namespace string, tr *authenticationv1.TokenRequest) string {
	var exp int64
	if tr.Spec.ExpirationSeconds != nil {
		exp = *tr.Spec.ExpirationSeconds
	}
	var ref authenticationv1.BoundObjectReference
	if tr.Spec.BoundObjectRef != nil {
		ref = *tr.Spec.BoundObjectRef
	}
	return fmt.Sprintf("%q/%q/%#v/%#v/%#v/%q", name, namespace, tr.Spec.Audiences, exp, ref, tr.UID)
}

// TestTokenKeyIsTheKubelets checks tokenKey's text against the kubelet's fmt format for every
// shape of request (no, an empty, one, several audiences; no or a zero expiry; no bound object;
// a request UID), for strings fmt quotes with escapes, and for random ones, and that requests
// differing in any field get different keys.
func TestTokenKeyIsTheKubelets(t *testing.T) {
	exp := int64(3607)
	zero := int64(0)
	negative := int64(-1)
	ref := &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: "uid-p"}
	req := func(aud []string, exp *int64, ref *authenticationv1.BoundObjectReference, uid types.UID) *authenticationv1.TokenRequest {
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: aud, ExpirationSeconds: exp, BoundObjectRef: ref}}
		tr.UID = uid
		return tr
	}
	reqs := []*authenticationv1.TokenRequest{
		req(nil, &exp, ref, ""),
		req([]string{}, &exp, ref, ""),
		req([]string{"api"}, &exp, ref, ""),
		req([]string{""}, &exp, ref, ""),
		req([]string{"api", "vault"}, &exp, ref, ""),
		req([]string{"api"}, nil, ref, ""),
		req([]string{"api"}, &zero, ref, ""),
		req([]string{"api"}, &exp, nil, ""),
		req([]string{"api"}, &exp, ref, "req-1"),
		req([]string{"api"}, &negative, ref, ""),
	}
	seen := map[string]int{}
	for i, tr := range reqs {
		want := kubeletTokenKey("default", "ns", tr)
		if got := tokenKey("default", "ns", tr); got != want {
			t.Errorf("request %d: tokenKey = %q, want the kubelet's %q", i, got, want)
		}
		// No expiry and an expiry of 0 are one key for the kubelet too (requests 5 and 6).
		if j, ok := seen[want]; ok && !(i == 6 && j == 5) {
			t.Errorf("requests %d and %d share the key %q", j, i, want)
		}
		seen[want] = i
	}
	if other := tokenKey("other", "ns", reqs[2]); other == tokenKey("default", "ns", reqs[2]) {
		t.Errorf("two service accounts share the key %q", other)
	}

	odd := []string{"", `"`, `\`, "a\"b\\c", "tab\there", "new\nline", "\x00\x7f", "é", "日本", "\xff\xfe", "\u2028", "`back`",
		"a very long audience that with the others will not fit in the stack buffer of two hundred and fifty-six bytes........."}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return odd[r.IntN(len(odd))] }
	for i := range 2000 {
		var aud []string
		if r.IntN(4) > 0 {
			aud = []string{}
			for range r.IntN(4) {
				aud = append(aud, pick())
			}
		}
		var e *int64
		if r.IntN(3) > 0 {
			v := r.Int64() - r.Int64()
			e = &v
		}
		var b *authenticationv1.BoundObjectReference
		if r.IntN(3) > 0 {
			b = &authenticationv1.BoundObjectReference{Kind: pick(), APIVersion: pick(), Name: pick(), UID: types.UID(pick())}
		}
		tr := req(aud, e, b, types.UID(pick()))
		name, namespace := pick(), pick()
		if got, want := tokenKey(name, namespace, tr), kubeletTokenKey(name, namespace, tr); got != want {
			t.Fatalf("random request %d: tokenKey = %q, want the kubelet's %q", i, got, want)
		}
	}
}

// TestCachedTokenAllocatesNothing: every remount of a projected volume asks for its token again;
// a cached token that needs no refresh is found by the key's bytes, without a string of it.
func TestCachedTokenAllocatesNothing(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	m, err := NewTokenManager(TokenOptions{Clock: clk, Tracer: trace.Discard, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(3607)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"api"}, ExpirationSeconds: &exp,
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: "uid-p"}}}
	token := tr.DeepCopy()
	token.Status.ExpirationTimestamp = metav1.NewTime(clk.Now().Add(time.Duration(exp) * time.Second))
	m.cache[kubeletTokenKey("default", "ns", tr)] = token
	if got, err := m.GetServiceAccountToken("ns", "default", tr); got != token || err != nil {
		t.Fatalf("GetServiceAccountToken() = %v, %v, want the cached token", got, err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := m.GetServiceAccountToken("ns", "default", tr); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("GetServiceAccountToken() of a cached token = %v allocations, want 0", n)
	}
}

// BenchmarkTokenKey is the cache key of a projected volume's token, asked at every remount, as
// tokenKey writes it and as the kubelet's fmt format does.
func BenchmarkTokenKey(b *testing.B) {
	exp := int64(3607)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp,
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: "uid-p"}}}
	b.Run("written", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tokenKey("default", "ns", tr)
		}
	})
	b.Run("fmt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			kubeletTokenKey("default", "ns", tr)
		}
	})
}

// tokenKey is appendTokenKey's text as a string, the form the tests compare.
func tokenKey(name, namespace string, tr *authenticationv1.TokenRequest) string {
	var buf [256]byte
	return string(appendTokenKey(buf[:0], name, namespace, tr))
}
