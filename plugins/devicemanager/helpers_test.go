package devicemanager

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func metav1ObjectMeta(uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "default", Name: uid, UID: types.UID(uid)}
}
