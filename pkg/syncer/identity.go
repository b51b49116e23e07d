package syncer

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/uuid"
)

// LeaderIdentity is how a replica in Pod pod holds the Lease:
// <pod>_<uuid>. A Pod name never contains "_", so HolderPodName finds the
// Pod again; the uuid keeps two processes of one Pod, such as a restarted
// container, apart.
func LeaderIdentity(pod string) string {
	return pod + "_" + string(uuid.NewUUID())
}

// HolderPodName returns the Pod name in a holder identity that
// LeaderIdentity made: everything before the last "_". An identity without
// "_" is returned whole.
func HolderPodName(identity string) string {
	if i := strings.LastIndex(identity, "_"); i >= 0 {
		return identity[:i]
	}
	return identity
}
