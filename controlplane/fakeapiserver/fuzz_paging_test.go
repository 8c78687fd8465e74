package fakeapiserver_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// FuzzContinueToken lists pods with an arbitrary continue token, raw and as the base64 of
// arbitrary JSON. A token is outside input: it must be refused with 400, or be too old (410) or
// from the future (504, as kube-apiserver's watch cache gives up waiting for it), or list a
// page, and never crash the server.
func FuzzContinueToken(f *testing.F) {
	f.Add(`{"v":"meta.k8s.io/v1","rv":5,"start":"pod-1\u0000"}`, "2")
	f.Add(`{"v":"meta.k8s.io/v1","rv":-1,"start":"../../x"}`, "")
	f.Add(`{"v":"meta.k8s.io/v1","rv":9223372036854775807,"start":"/"}`, "1")
	f.Add(`{"v":"meta.k8s.io/v1","rv":1,"start":"a"}`, "0")
	f.Add("not json", "-1")
	f.Fuzz(func(t *testing.T, token, limit string) {
		h := newServer(t, testOptions()).Handler()
		for i := range 3 {
			body := fmt.Sprintf(`{"metadata":{"name":"pod-%d"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`, i)
			if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", body); w.Code != http.StatusCreated {
				t.Fatalf("seeding pod-%d = %d %s", i, w.Code, w.Body.String())
			}
		}
		for _, c := range []string{token, base64.RawURLEncoding.EncodeToString([]byte(token))} {
			q := url.Values{"continue": {c}, "limit": {limit}}
			w := do(h, "GET", "/api/v1/pods?"+q.Encode(), "", "")
			switch w.Code {
			case http.StatusOK, http.StatusBadRequest, http.StatusGone, http.StatusGatewayTimeout:
			default:
				t.Fatalf("list with continue %q limit %q = %d %s", c, limit, w.Code, w.Body.String())
			}
		}
	})
}
