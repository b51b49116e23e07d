// Package kubelet stands in for the kubelets of a cluster and for
// kube-controller-manager's endpointslice controller, on the local
// control plane of test/framework, which has neither a kubelet nor a
// container engine. With it, manifests are installed as in a cluster
// (`kubectl apply -k deploy/webhook`), kube-controller-manager's
// Deployment and ReplicaSet controllers create the Pods, kube-scheduler
// binds them to the fake Nodes, and the stand-in runs them: real
// processes of the project's binaries (Binary) or stand-ins in the test
// process (Func, and KimSnatch for the old kim-snatch of
// test/e2e/kimsnatch). The API server, started with aggregator routing
// (framework.Options.AggregatorRouting), calls a webhook at a Ready
// endpoint of its Service's EndpointSlices, which the stand-in writes.
//
// # What it does as the kubelet
//
// Every Pod in Options.Namespace that is bound to a Node and whose
// containers' images all have a runtime (Options.Runtimes, keyed by
// ImageName) is run, whatever its Node:
//
//   - Volumes are mounted before the containers start: a Secret volume
//     into a directory of the Pod's with the kubelet's atomic ..data
//     swap (test/e2e/projector), its first content at once and every
//     change Options.ProjectionDelay later; an emptyDir as an empty
//     directory. A missing Secret or ServiceAccount keeps the Pod
//     waiting in ContainerCreating, retried every second.
//   - The ServiceAccount token is mounted as the ServiceAccount admission
//     plugin decides (automountServiceAccountToken of the Pod, else of the
//     ServiceAccount, else true): a TokenRequest bound to the Pod, given
//     to the container as a kubeconfig (--kubeconfig and KUBECONFIG for a
//     Binary, Container.Client for a Func), so that the Pod's RBAC applies
//     exactly as in a cluster.
//   - The environment is resolved as the kubelet resolves it (values with
//     $(VAR) references, fieldRef of the downward API, ConfigMap and
//     Secret keys, envFrom), and $(VAR) references in command and args are
//     expanded from it.
//   - Every container port, and the port of every --*-bind-address=[host]:N
//     and --webhook-port=N flag, is moved to a free loopback port
//     (framework.FreePorts), the same for all containers of a Pod, as they
//     share a network namespace; mount paths in args and env are rewritten
//     to the volume directories.
//   - The readiness probe (httpGet or tcpSocket, on a port by number or
//     name) runs as the kubelet's probe worker runs it: at once, then every
//     periodSeconds, with successThreshold and failureThreshold.
//   - The status is written on change, with a merge patch of the status
//     subresource carrying the Pod's UID: phase as the kubelet computes it,
//     the conditions PodReadyToStartContainers, Initialized,
//     ContainersReady and Ready (readiness gates included), container
//     statuses with state, last state, ready, started and restartCount,
//     startTime, and hostIP from the Node's InternalIP address if it has
//     one.
//   - A container that exits is restarted as the restartPolicy says, after
//     Options.RestartBackoff, doubling with each exit in a row (the kubelet
//     starts at 10s and caps at 5 minutes); meanwhile it waits in
//     CrashLoopBackOff and is not ready.
//   - When the Pod gets a deletionTimestamp, every container gets SIGTERM
//     at once and SIGKILL after the deletion's grace period (at least 2s);
//     once all have exited the final status is written and the deletion
//     confirmed with grace 0 and the Pod's UID as precondition.
//
// # What it does as the endpointslice controller
//
// For each Service of the namespace with a selector it writes one
// EndpointSlice per matching Pod that it runs, managed by
// EndpointSliceManager and labelled with the Service's name, with one
// FQDN endpoint at EndpointAddress (127.0.0.1, which an IPv4 slice
// rejects), targetRef to the Pod, and the Service's ports at the Pod's
// loopback ports. Its conditions follow the Pod object: serving is the
// Pod's Ready condition, terminating its deletionTimestamp, ready both
// (so a Pod being deleted is not ready at once). It follows Services
// created, changed and deleted, Pod labels, readiness and deletion, and
// deletes slices no longer wanted. The stand-in never sets a Pod IP, so
// kube-controller-manager's endpointslice controller leaves its Pods out
// and these slices are the only endpoints they have.
//
// # Where it differs from a cluster
//
//   - There is one stand-in for all Nodes, in one namespace. It ignores
//     resource requests and limits, security contexts, the Node's
//     capacity, and whether the Node exists or is Ready.
//   - Containers run as processes of the test's user on loopback, without
//     isolation: ports not named by a container port, a flag or a probe
//     are not moved, a path the arguments do not name is the machine's,
//     and only Secret and emptyDir volumes are mounted (a Secret's items,
//     defaultMode and optional are ignored; subPath mounts follow the
//     Secret, as the kubelet's do not). The image is the runtime: Binary
//     runs its own executable in place of the first element of a
//     container's command.
//   - A Pod with init containers (sidecars included) is not run. Startup
//     and liveness probes, lifecycle hooks, exec and grpc probes (which
//     never succeed here), ephemeral containers and resizing are not
//     modelled. The token is not refreshed; it lives 24 hours.
//   - There is no Pod IP, no Service environment variables and no
//     kube-proxy: only the API server and the tests, through the
//     EndpointSlices, reach a Pod's ports.
//   - Options.MaxProbePeriod can shorten the probes' periods, so that
//     tests need not wait the production ones.
//   - Stop stops the containers and leaves the Pods and EndpointSlices as
//     they are.
//
// docs/development.md describes the local control plane and the
// aggregator routing the slices feed.
package kubelet
