package fakeapiserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// serviceaccounts/token is kube-apiserver's TokenREST: a TokenRequest, bound to a pod, answered
// with a token and its expiry. It is what the kubelet asks for each projected service account
// token volume (kube-api-access-*), once per pod and again when 80% of the token's lifetime has
// passed, so it is part of the kubelet's request economy. The token is shaped like a
// service account JWT and carries kube-apiserver's claims, but nothing here verifies it: this
// server authenticates with its one bearer token (auth.go).

// Token expiry bounds and defaults, as kube-apiserver's (authentication/v1 defaulting and
// ValidateTokenRequest; pkg/serviceaccount's extended expiry).
const (
	defaultTokenExpirationSeconds = 60 * 60
	minTokenExpirationSeconds     = 10 * 60
	maxTokenExpirationSeconds     = 1 << 32
	// warnOnlyBoundTokenExpirationSeconds is the expiry the ServiceAccount admission plugin asks
	// for in kube-api-access volumes; kube-apiserver (--service-account-extend-token-expiration,
	// on by default) makes such a pod-bound token valid for a year but warns after this.
	warnOnlyBoundTokenExpirationSeconds = 60*60 + 7
	extendedTokenExpirationSeconds      = 365 * 24 * 60 * 60
)

// serviceAccountIssuer is the issuer and default audience of the tokens, kubeadm's
// --service-account-issuer (which --api-audiences defaults to).
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// tokenRequestResource is the TokenRequest kind serviceaccounts/token takes and returns. It is
// not a served resource of its own: only its decoding is needed.
var tokenRequestResource = &resource{
	name: "tokenrequests", singular: "tokenrequest", kind: "TokenRequest",
	gv: schema.GroupVersion{Group: authenticationv1.GroupName, Version: "v1"}, namespaced: true,
	newObj: func() runtime.Object { return &authenticationv1.TokenRequest{} },
}

// createToken serves POST serviceaccounts/NAME/token as TokenREST.Create does: the names must
// match the URL's, the service account must exist, the expiry is defaulted and bounded, and a
// token bound to a pod needs the pod, running as that service account, with the UID the
// reference names. The answer is the request with the service account's name, namespace and
// UID, the default audience, and the token with its expiry, 201.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, t target) error {
	fv, err := parseFieldValidation(r)
	if err != nil {
		return err
	}
	data, err := readObjectBody(r)
	if err != nil {
		return err
	}
	obj, _, err := decode(tokenRequestResource, data, fv)
	if err != nil {
		return err
	}
	out, err := s.createTokenObject(r.Context(), t, obj.(*authenticationv1.TokenRequest))
	if err != nil {
		return err
	}
	if answerForm(r) == outputProtobuf {
		// The envelope names the kind, whatever the request's body said.
		out.GetObjectKind().SetGroupVersionKind(tokenRequestResource.gvk())
		writeObject(w, outputProtobuf, http.StatusCreated, out)
		return nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode TokenRequest: %w", err)
	}
	writeRaw(w, http.StatusCreated, raw)
	return nil
}

// createTokenObject answers a decoded TokenRequest, shared by POST serviceaccounts/NAME/token and
// the in-process client (direct.go). req is the caller's to give away; the answer is new.
func (s *Server) createTokenObject(ctx context.Context, t target, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	gk := tokenRequestResource.gvk().GroupKind()
	if req.Name != "" && req.Name != t.name {
		return nil, apierrors.NewInvalid(gk, t.name, field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), req.Name, "must match the service account name if specified")})
	}
	if req.Namespace != "" && req.Namespace != t.namespace {
		return nil, apierrors.NewInvalid(gk, t.name, field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), req.Namespace, "must match the service account namespace if specified")})
	}
	if req.Spec.ExpirationSeconds == nil {
		req.Spec.ExpirationSeconds = ptrInt64(defaultTokenExpirationSeconds)
	}
	var out *authenticationv1.TokenRequest
	err := s.store.lockedAs(ctx, t.class, func() error {
		var err error
		out, err = s.issueToken(t, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// issueToken checks the request against the stored service account and bound object and
// returns the answer. The caller holds the store lock.
func (s *Server) issueToken(t target, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	saEntry, ok := s.store.get(t.res, t.namespace, t.name)
	if !ok {
		return nil, apierrors.NewNotFound(t.res.groupResource(), t.name)
	}
	sa := saEntry.obj.(*corev1.ServiceAccount)
	if req.UID != "" && req.UID != sa.UID {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: authenticationv1.GroupName, Resource: "TokenRequest"}, t.name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
	}
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = []string{serviceAccountIssuer}
	}
	req.Name, req.Namespace, req.UID = sa.Name, sa.Namespace, sa.UID
	now := s.clock.Now()
	req.CreationTimestamp = metav1.NewTime(now.Truncate(time.Second))
	req.Status = authenticationv1.TokenRequestStatus{}
	spec := field.NewPath("spec")
	switch exp := *req.Spec.ExpirationSeconds; {
	case exp < minTokenExpirationSeconds:
		return nil, apierrors.NewInvalid(tokenRequestResource.gvk().GroupKind(), "", field.ErrorList{field.Invalid(spec.Child("expirationSeconds"), exp, "may not specify a duration less than 10 minutes")})
	case exp > maxTokenExpirationSeconds:
		return nil, apierrors.NewInvalid(tokenRequestResource.gvk().GroupKind(), "", field.ErrorList{field.Invalid(spec.Child("expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds")})
	}
	var pod *corev1.Pod
	if ref := req.Spec.BoundObjectRef; ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != "" || ref.Kind != "Pod" {
			// Nodes and Secrets can be bound to in kube-apiserver; no kubelet asks for it.
			return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gv.WithKind(ref.Kind).String()))
		}
		podEntry, ok := s.store.get(s.store.resource("pods"), t.namespace, ref.Name)
		if !ok {
			return nil, apierrors.NewNotFound(corev1.Resource("pods"), ref.Name)
		}
		pod = podEntry.obj.(*corev1.Pod)
		if t.name != pod.Spec.ServiceAccountName {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", t.name))
		}
		if ref.UID != "" && ref.UID != pod.UID {
			return nil, apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, ref.Name,
				fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
		}
	}
	out := req.DeepCopy()
	out.Status = authenticationv1.TokenRequestStatus{
		Token:               s.serviceAccountJWT(sa, pod, req, now),
		ExpirationTimestamp: metav1.NewTime(now.Add(time.Duration(*req.Spec.ExpirationSeconds) * time.Second)),
	}
	out.SetGroupVersionKind(tokenRequestResource.gvk())
	return out, nil
}

// serviceAccountJWT is a JWT with kube-apiserver's service account claims. Its expiry is extended to a year
// for a pod-bound kube-api-access token, as kube-apiserver extends it (the status still says
// the hour and 7 seconds asked for). It is derived from its claims, so that a replay issues the
// same token every time; its signature is a digest, not a signature anyone checks.
func (s *Server) serviceAccountJWT(sa *corev1.ServiceAccount, pod *corev1.Pod, req *authenticationv1.TokenRequest, now time.Time) string {
	exp, warnAfter := *req.Spec.ExpirationSeconds, int64(0)
	if pod != nil && exp == warnOnlyBoundTokenExpirationSeconds {
		warnAfter, exp = now.Unix()+exp, extendedTokenExpirationSeconds
	}
	type ref struct {
		Name string `json:"name"`
		UID  string `json:"uid"`
	}
	private := map[string]any{"namespace": sa.Namespace, "serviceaccount": ref{sa.Name, string(sa.UID)}}
	if pod != nil {
		private["pod"] = ref{pod.Name, string(pod.UID)}
		if pod.Spec.NodeName != "" {
			// ServiceAccountTokenPodNodeInfo: the node's name, and its UID when it exists.
			node := ref{Name: pod.Spec.NodeName}
			if e, ok := s.store.get(s.store.resource("nodes"), "", pod.Spec.NodeName); ok {
				node.UID = string(e.meta().GetUID())
			}
			private["node"] = node
		}
	}
	if warnAfter != 0 {
		private["warnafter"] = warnAfter
	}
	claims := map[string]any{
		"aud": req.Spec.Audiences, "iss": serviceAccountIssuer, "sub": "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Unix() + exp, "kubernetes.io": private,
	}
	payload, _ := json.Marshal(claims) // maps of strings and numbers always encode
	digest := sha256.Sum256(payload)
	claims["jti"] = string(derivedUID(string(digest[:])))
	payload, _ = json.Marshal(claims)
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"RS256","kid":"minikubelet"}`)) + "." + enc.EncodeToString(payload)
	sig := sha256.Sum256([]byte(head))
	return head + "." + enc.EncodeToString(sig[:])
}

func ptrInt64(v int64) *int64 { return &v }
