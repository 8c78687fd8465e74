package fakeapiserver

import (
	"net/http"
	"net/url"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/apf"
)

// The store lock's turns go to the waiting requests as kube-apiserver's API Priority and
// Fairness would admit them (internal/apf): each request is classified by its user, verb and
// resource into one of v1.35's default priority levels and a flow, and waits for the lock in that
// level's turn. A request over HTTP is the user its credentials authenticate as: the server's
// one bearer token stands for a system:masters user, whose requests are exempt, and without a
// token every request is the anonymous user's (global-default). An in-process client is who it
// says it is (DirectAs).

// requestUser is the user an HTTP request that passed authentication is.
func (s *Server) requestUser() *authenticationv1.UserInfo {
	if s.token != "" {
		return &tokenUser
	}
	return &anonymousUser
}

// requestClass is where a request of user with verb on t waits for the store lock.
func requestClass(user *authenticationv1.UserInfo, verb verbs, t target) apf.Class {
	if user == nil {
		return apf.Class{}
	}
	return apf.Classify(apf.Request{
		User: user.Username, Groups: user.Groups, Verb: verb.name(),
		APIGroup: t.res.gv.Group, Resource: t.res.name, Subresource: t.subresource, Namespace: t.namespace,
	})
}

// queueCancelledError is the failure of a request whose context ended while it waited for the
// store lock, err being the context's error. kube-apiserver ejects such a request from its
// priority level's queue without running it, and its priority-and-fairness filter answers 429
// (tooManyRequests: a plain-text "Too many requests, please try again later." with a
// Retry-After), counted in the request metrics as 429. Over HTTP the client that gave up reads
// no answer; client-go returns its own context error (queueCancelledClientError).
type queueCancelledError struct {
	err error
}

func (e *queueCancelledError) Error() string {
	return "request ejected from its priority level's queue: " + e.err.Error()
}

func (e *queueCancelledError) Unwrap() error { return e.err }

// Status is the answer's code, for the request metrics and any writer of a Status; the HTTP
// answer itself is plain text (writeErrorAs).
func (e *queueCancelledError) Status() metav1.Status {
	return metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusTooManyRequests,
		Reason: metav1.StatusReasonTooManyRequests, Message: tooManyRequestsMessage,
	}
}

// tooManyRequestsMessage is the body of the priority-and-fairness filter's 429.
const tooManyRequestsMessage = "Too many requests, please try again later."

// writeTooManyRequests answers as the priority-and-fairness filter answers a request it did not
// serve. The Retry-After is the filter's least (its dropped-requests tracker starts at one second
// and grows only while a level keeps dropping requests, which nothing here counts).
func writeTooManyRequests(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, tooManyRequestsMessage, http.StatusTooManyRequests)
}

// queueCancelledClientError is what client-go returns to a caller whose context ended while its
// request waited in the server's queue: net/http's error for a request its context cancelled, the
// method (as net/http spells it in errors) and the request's path (an in-process request has no
// host) around the context's error, which errors.Is finds.
func queueCancelledClientError(method string, t target, err error) error {
	return &url.Error{Op: method[:1] + strings.ToLower(method[1:]), URL: t.path(), Err: err}
}

// path is the request path of t, as a client builds it.
func (t target) path() string {
	var b strings.Builder
	if t.res.gv.Group == "" {
		b.WriteString("/api/" + t.res.gv.Version)
	} else {
		b.WriteString("/apis/" + t.res.gv.Group + "/" + t.res.gv.Version)
	}
	if t.namespace != "" {
		b.WriteString("/namespaces/" + t.namespace)
	}
	b.WriteString("/" + t.res.name)
	if t.name != "" {
		b.WriteString("/" + t.name)
	}
	if t.subresource != "" {
		b.WriteString("/" + t.subresource)
	}
	return b.String()
}
