package volumemanager

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestTokenKeyMemo checks that the memoized key is tokenKey's text for every shape of request,
// asked twice (the second from the memo), that requests differing in any field get different
// keys, and that a pod's keys leave the memo with its tokens.
func TestTokenKeyMemo(t *testing.T) {
	exp := int64(3607)
	zero := int64(0)
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
	}
	m := &TokenManager{}
	seen := map[string]int{}
	for i, tr := range reqs {
		want := tokenKey("default", "ns", tr)
		for range 2 {
			if got := m.key("default", "ns", tr); got != want {
				t.Errorf("request %d: key = %q, want tokenKey's %q", i, got, want)
			}
		}
		// No expiry and an expiry of 0 are one key in tokenKey too (requests 5 and 6).
		if j, ok := seen[want]; ok && !(i == 6 && j == 5) {
			t.Errorf("requests %d and %d share the key %q", j, i, want)
		}
		seen[want] = i
	}
	if other := m.key("other", "ns", reqs[2]); other == m.key("default", "ns", reqs[2]) {
		t.Errorf("two service accounts share the key %q", other)
	}
	m.DeleteServiceAccountToken("uid-p")
	for in := range m.keys {
		if in.ref.UID == "uid-p" {
			t.Errorf("key of the deleted pod's request still memoized: %+v", in)
		}
	}
}

// BenchmarkTokenKey is the cache key of a projected volume's token, asked at every remount.
func BenchmarkTokenKey(b *testing.B) {
	exp := int64(3607)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp,
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: "uid-p"}}}
	b.Run("format", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tokenKey("default", "ns", tr)
		}
	})
	b.Run("memo", func(b *testing.B) {
		m := &TokenManager{}
		b.ReportAllocs()
		for b.Loop() {
			m.key("default", "ns", tr)
		}
	})
}
