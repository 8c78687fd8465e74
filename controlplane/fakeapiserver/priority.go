package fakeapiserver

import (
	authenticationv1 "k8s.io/api/authentication/v1"

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
