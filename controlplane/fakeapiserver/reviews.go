package fakeapiserver

import (
	"crypto/subtle"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The self reviews kubectl asks for: `kubectl auth can-i` (SelfSubjectAccessReview, and
// SelfSubjectRulesReview for --list) and `kubectl auth whoami` (SelfSubjectReview), and the
// reviews a kubelet's webhook authentication and authorization ask for (TokenReview,
// SubjectAccessReview). They are created and answered, never stored, as by kube-apiserver.
//
// The server has no authorization: whoever authenticates may do everything (docs/security.md),
// as a kube-apiserver with --authorization-mode=AlwaysAllow. So every access review is allowed,
// with a reason that says so, and the rules review lists the rules AlwaysAllow gives. The user
// is the one the bearer token stands for, or the anonymous user when the server takes no token.

var (
	authorizationV  = schema.GroupVersion{Group: "authorization.k8s.io", Version: "v1"}
	authenticationV = schema.GroupVersion{Group: "authentication.k8s.io", Version: "v1"}
)

// noAuthorizationReason is the reason every access review is allowed.
const noAuthorizationReason = "the minikubelet API server has no authorization: every authenticated request is allowed"

// tokenUser is the user the server's bearer token authenticates as: an administrator, as the
// token gives every right.
var tokenUser = authenticationv1.UserInfo{
	Username: "minikubelet",
	Groups:   []string{"system:masters", "system:authenticated"},
}

// anonymousUser is kube-apiserver's anonymous user, who every request is when the server takes no
// token.
var anonymousUser = authenticationv1.UserInfo{
	Username: "system:anonymous",
	Groups:   []string{"system:unauthenticated"},
}

// reviewResource is a resource that is only created, and answered by answer, which may refuse
// it.
func reviewResource(gv schema.GroupVersion, name, kind string, newObj func() runtime.Object,
	validate func(runtime.Object) field.ErrorList, answer func(*Server, runtime.Object) error) *resource {
	res := &resource{
		name: name, singular: name[:len(name)-1], kind: kind, gv: gv, verbs: verbCreate, view: true,
		newObj: newObj, fieldSet: func(runtime.Object) fields.Set { return fields.Set{} }, validate: validate,
	}
	res.serve = func(s *Server, w http.ResponseWriter, r *http.Request, t target, _ verbs) error {
		obj, warnings, err := readObject(r, t)
		if err != nil {
			return err
		}
		if errs := validate(obj); len(errs) > 0 {
			return apierrors.NewInvalid(res.gvk().GroupKind(), "", errs)
		}
		if err := answer(s, obj); err != nil {
			return err
		}
		obj.GetObjectKind().SetGroupVersionKind(res.gvk())
		writeWarnings(w, warnings)
		writeObject(w, answerForm(r), http.StatusCreated, obj)
		return nil
	}
	return res
}

func selfSubjectAccessReviewResource() *resource {
	return reviewResource(authorizationV, "selfsubjectaccessreviews", "SelfSubjectAccessReview",
		func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
		validateSelfSubjectAccessReview,
		func(_ *Server, obj runtime.Object) error {
			obj.(*authorizationv1.SelfSubjectAccessReview).Status = authorizationv1.SubjectAccessReviewStatus{
				Allowed: true, Reason: noAuthorizationReason,
			}
			return nil
		})
}

func selfSubjectRulesReviewResource() *resource {
	return reviewResource(authorizationV, "selfsubjectrulesreviews", "SelfSubjectRulesReview",
		func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} },
		func(obj runtime.Object) field.ErrorList {
			review := obj.(*authorizationv1.SelfSubjectRulesReview)
			if review.Spec.Namespace == "" {
				return field.ErrorList{field.Required(field.NewPath("spec", "namespace"), "")}
			}
			return nil
		},
		func(_ *Server, obj runtime.Object) error {
			obj.(*authorizationv1.SelfSubjectRulesReview).Status = authorizationv1.SubjectRulesReviewStatus{
				ResourceRules: []authorizationv1.ResourceRule{{
					Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
				}},
				NonResourceRules: []authorizationv1.NonResourceRule{{
					Verbs: []string{"*"}, NonResourceURLs: []string{"*"},
				}},
			}
			return nil
		})
}

func selfSubjectReviewResource() *resource {
	return reviewResource(authenticationV, "selfsubjectreviews", "SelfSubjectReview",
		func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
		func(runtime.Object) field.ErrorList { return nil },
		func(s *Server, obj runtime.Object) error {
			user := anonymousUser
			if s.token != "" {
				user = tokenUser
			}
			obj.(*authenticationv1.SelfSubjectReview).Status.UserInfo = user
			return nil
		})
}

func tokenReviewResource() *resource {
	return reviewResource(authenticationV, "tokenreviews", "TokenReview",
		func() runtime.Object { return &authenticationv1.TokenReview{} },
		func(runtime.Object) field.ErrorList { return nil },
		func(s *Server, obj runtime.Object) error {
			review := obj.(*authenticationv1.TokenReview)
			if review.Spec.Token == "" {
				return apierrors.NewBadRequest("token is required for TokenReview in authentication")
			}
			// The one token the server takes is the one user it knows.
			if s.token != "" && subtle.ConstantTimeCompare([]byte(review.Spec.Token), []byte(s.token)) == 1 {
				review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: tokenUser, Audiences: review.Spec.Audiences}
				return nil
			}
			review.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
			return nil
		})
}

func subjectAccessReviewResource() *resource {
	return reviewResource(authorizationV, "subjectaccessreviews", "SubjectAccessReview",
		func() runtime.Object { return &authorizationv1.SubjectAccessReview{} },
		validateSubjectAccessReview,
		func(_ *Server, obj runtime.Object) error {
			obj.(*authorizationv1.SubjectAccessReview).Status = authorizationv1.SubjectAccessReviewStatus{
				Allowed: true, Reason: noAuthorizationReason,
			}
			return nil
		})
}

// validateSubjectAccessReview is ValidateSubjectAccessReview: exactly one of the attribute
// kinds, a user or a group, and no metadata.
func validateSubjectAccessReview(obj runtime.Object) field.ErrorList {
	review := obj.(*authorizationv1.SubjectAccessReview)
	errs := validateSelfSubjectAccessReview(&authorizationv1.SelfSubjectAccessReview{
		ObjectMeta: review.ObjectMeta,
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: review.Spec.ResourceAttributes, NonResourceAttributes: review.Spec.NonResourceAttributes,
		},
	})
	if review.Spec.User == "" && len(review.Spec.Groups) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "user"), review.Spec.User, "at least one of user or group must be specified"))
	}
	return errs
}

// validateSelfSubjectAccessReview is ValidateSelfSubjectAccessReview: exactly one of the
// attribute kinds, and no metadata.
func validateSelfSubjectAccessReview(obj runtime.Object) field.ErrorList {
	review := obj.(*authorizationv1.SelfSubjectAccessReview)
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if review.Spec.ResourceAttributes != nil && review.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(spec.Child("nonResourceAttributes"), review.Spec.NonResourceAttributes,
			"cannot be specified in combination with resourceAttributes"))
	}
	if review.Spec.ResourceAttributes == nil && review.Spec.NonResourceAttributes == nil {
		errs = append(errs, field.Invalid(spec.Child("resourceAttributes"), review.Spec.NonResourceAttributes,
			"exactly one of nonResourceAttributes or resourceAttributes must be specified"))
	}
	meta := review.ObjectMeta
	meta.ManagedFields = nil
	if !metaEmpty(&meta) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), review.ObjectMeta, "must be empty"))
	}
	return errs
}

func metaEmpty(m *metav1.ObjectMeta) bool {
	return m.Name == "" && m.GenerateName == "" && m.Namespace == "" && m.UID == "" && m.ResourceVersion == "" &&
		len(m.Labels) == 0 && len(m.Annotations) == 0 && len(m.OwnerReferences) == 0 && len(m.Finalizers) == 0 &&
		m.CreationTimestamp.IsZero() && m.DeletionTimestamp == nil && m.Generation == 0
}
