package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The catalogue's words (words.go) of the items that follow the calls of
// the API server to the webhook and the Pods it admits: webhook-endpoints,
// served-certificate, admission, kyma-pool and placement.

// Keys of webhook-endpoints.
const (
	keyEndpointsNoMWC   finding = "no-mwc"   // no entries to follow
	keyEndpointsBroken  finding = "broken"   // entries the API server cannot call
	keyEndpointsNotOurs finding = "not-ours" // no entry calls the webhook's Service
	keyEndpointsForeign finding = "foreign"  // entries of another system
	keyEndpointsReady   finding = "ready"
)

// targetPartials word an entryTarget: where its calls go, and why they cannot.
const targetPartials = `{{define "target"}}entry {{.Entry.Name}}{{if .Ref}} → Service {{.Ref.Namespace}}/` +
	`{{.Ref.Name}} port {{.Port}} path {{.Path}}{{else}} (URL){{end}}{{end}}` +
	`{{define "problems"}}{{if .BadPath}}calls path {{.Path}}, which the webhook does not serve ` +
	`(/mutate-pod, /mutate--v1-pod){{if or .Missing .NoPort .NoReady}}, {{end}}{{end}}` +
	`{{if .Missing}}Service {{.Ref.Namespace}}/{{.Ref.Name}} does not exist` +
	`{{else if .NoPort}}Service {{.Ref.Namespace}}/{{.Ref.Name}} has no port {{.Port}}` +
	`{{else if .NoReady}}Service {{.Ref.Namespace}}/{{.Ref.Name}} has no ready endpoint for port {{.Port}}` +
	`{{end}}{{end}}`

func webhookEndpointsWords() itemWords {
	const partials = targetPartials +
		`{{define "fine"}}{{range $i, $t := .Fine}}{{if $i}}; {{end}}{{template "target" $t}}: ` +
		`{{len $t.Ready}} ready endpoints{{end}}{{end}}`
	return itemWords{facts: endpointsFacts{}, partials: partials, phrases: map[finding]phrase{
		keyEndpointsNoMWC: {`{{template "mwcAbsent" .}}`, ""},
		keyEndpointsBroken: {
			`{{range $i, $t := .Broken}}{{if $i}}; {{end}}{{template "target" $t}}: {{template "problems" $t}}{{end}}`,
			`The API server admits these Pods without the term: to restore the Service and the entries, ` +
				`{{template "reinstall" "snatch-webhook"}}; and see "Webhook unreachable" in ` +
				`docs/troubleshooting.md for endpoints that are not ready.`},
		keyEndpointsNotOurs: {
			`no entry of {{.WebhookConfiguration}} calls Service {{.Namespace}}/{{.WebhookService}}`,
			`{{template "reinstall" "snatch-webhook"}}; or fix --webhook-service.`},
		keyEndpointsForeign: {
			`{{template "fine" .}}; entries of another system: {{range $i, $t := .Foreign}}{{if $i}}; {{end}}` +
				`{{template "target" $t}}{{if $t.Denied}}: Service not readable with these credentials` +
				`{{else if or $t.Missing $t.NoPort $t.NoReady}}: {{template "problems" $t}}{{end}}{{end}}`,
			`Remove the other entries, such as an earlier installation's: ` +
				`kubectl edit mutatingwebhookconfiguration {{.WebhookConfiguration}} (docs/migration.md).`},
		keyEndpointsReady: {`{{template "fine" .}}`, ""},
	}}
}

// String names an endpoint by its address and Pod.
func (e endpoint) String() string {
	if e.pod == "" {
		return e.addr
	}
	return e.addr + " (Pod " + e.pod + ")"
}

// Keys of served-certificate.
const (
	keyServedNoMWC       finding = "no-mwc"       // no entries to dial
	keyServedNoBundle    finding = "no-bundle"    // an entry's caBundle holds no certificate
	keyServedNoEndpoint  finding = "no-endpoint"  // nothing ready to dial
	keyServedBad         finding = "bad"          // certificates that do not verify
	keyServedUnreachable finding = "unreachable"  // from a Pod, where every Pod address is in reach
	keyServedOutOfReach  finding = "out-of-reach" // from outside the cluster
	keyServedVerified    finding = "verified"
)

func servedCertificateWords() itemWords {
	const partials = `{{define "svc"}}{{.WebhookService}}.{{.Namespace}}.svc{{end}}` +
		`{{define "line"}}{{.Name}}: serial {{printf "%X" .Serial}}, notAfter {{time .NotAfter}}{{end}}` +
		`{{define "lines"}}{{range $i, $e := .}}{{if $i}}; {{end}}{{template "line" $e}}{{end}}{{end}}` +
		`{{define "unreached"}}{{range $i, $e := .}}{{if $i}}, {{end}}{{$e.Name}}{{end}}{{end}}` +
		`{{define "elsewhere"}}see "Webhook unreachable" in docs/troubleshooting.md.{{end}}`
	return itemWords{facts: servedFacts{}, detail: servedEndpoint{}, partials: partials, phrases: map[finding]phrase{
		keyServedNoMWC:      {`{{template "mwcAbsent" .}}`, ""},
		keyServedNoBundle:   {`entry {{.Entry}} has no usable caBundle to verify with`, ""},
		keyServedNoEndpoint: {`no ready endpoint to dial`, ""},
		keyServedBad: {
			`{{len .Bad}} of {{.Dialled}} endpoints serve a certificate that does not verify for {{template "svc" .}} ` +
				`against the caBundle: {{template "lines" .Bad}}`,
			`The API server fails open on calls to these replicas: restart their Pods so that they load the ` +
				`Secret's certificate, and check that the Secret and the caBundle come from the same CA (ca-bundle); ` +
				`{{template "elsewhere"}}`},
		keyServedUnreachable: {
			`{{len .Unreachable}} of {{.Dialled}} endpoints could not be reached from this Pod of the cluster: ` +
				`{{template "unreached" .Unreachable}}; {{len .Good}} verify`,
			`A NetworkPolicy drops this Pod's connections to the webhook's Pods, or they do not listen: ` +
				`under a deny-all, the check needs the shipped NetworkPolicy ` +
				`kyma-project.io--kim-snatch-check-allow-to-webhook (deploy/README.md, "Network policies"); ` +
				`{{template "elsewhere"}}`},
		keyServedOutOfReach: {
			`{{len .Unreachable}} of {{.Dialled}} endpoints could not be reached from where check runs: ` +
				`{{template "unreached" .Unreachable}}; {{len .Good}} verify`,
			`Pod addresses are reachable only inside the cluster: run the check there (kubectl -n {{.Namespace}} ` +
				`create job --from=cronjob/kim-snatch-check kim-snatch-check-$(date -u +%Y%m%d%H%M%S), ` +
				`docs/operations.md "Run the check in the cluster"), or {{template "elsewhere"}}`},
		keyServedVerified: {
			`{{.Dialled}} endpoints serve certificates that verify for {{template "svc" .}} against the caBundle: ` +
				`{{template "lines" .Good}}`, ""},
		keyDetail: {`{{if .Unreached}}{{.Name}}: not reached: {{oneLine .Err}}{{else}}{{template "line" .}}: ` +
			`{{if .Err}}does not verify: {{.Err}}{{else}}verifies{{end}}{{end}}`, ""},
	}}
}

// Keys of admission.
const (
	keyAdmissionNoNamespace finding = "no-namespace" // the dry run's namespace does not exist
	keyAdmissionRefused     finding = "refused"      // the dry run was refused
	keyAdmissionNoTerm      finding = "no-term"      // the Pod came back without a term on the key
	keyAdmissionDisabled    finding = "disabled"     // no term, and the emergency disable deleted the MWC
	keyAdmissionTwoTerms    finding = "two-terms"    // more than one term on the key
	keyAdmissionOtherTerm   finding = "other-term"   // one term, not the webhook's
	keyAdmissionNoMWC       finding = "no-mwc"       // the right term, and no MWC
	keyAdmissionMWCDenied   finding = "mwc-denied"   // the right term, the MWC not readable
	keyAdmissionMWCFailed   finding = "mwc-failed"   // the right term, the MWC not read
	keyAdmissionNotCalled   finding = "not-called"   // the right term, no entry calls the webhook
	keyAdmissionTerm        finding = "term"
)

func admissionWords() itemWords {
	const partials = `{{define "term"}}{{range $i, $e := .Preference.MatchExpressions}}{{if $i}}, {{end}}` +
		`{{$e.Key}} {{$e.Operator}} {{$e.Values}}{{end}} (weight {{.Weight}}){{end}}` +
		`{{define "came"}}a dry-run Pod in {{.AdmissionNamespace}} came back after {{.Took}} with ` +
		`{{range $i, $t := .Terms}}{{if $i}} and {{end}}{{template "term" $t}}{{end}}{{end}}` +
		`{{define "want"}}{{.PoolLabelKey}} In [{{.Pool}}]{{end}}` +
		`{{define "find"}}Find the webhook that adds this term (kubectl get mutatingwebhookconfigurations), ` +
		`such as an old kim-snatch{{end}}`
	phrases := admissionProbePhrases()
	maps.Copy(phrases, admissionTermPhrases())
	return itemWords{facts: admissionFacts{}, partials: partials, phrases: phrases}
}

// admissionProbePhrases word a dry run that did not come back with a term.
func admissionProbePhrases() map[finding]phrase {
	return map[finding]phrase{
		keyAdmissionNoNamespace: {
			`namespace {{.AdmissionNamespace}}, where the dry run goes, not found: {{.Err}}`,
			`The syncer's release ships the namespace with the check's identity: ` +
				`{{template "reinstall" "cabundle-syncer"}}; or set --admission-namespace.`},
		keyAdmissionRefused: {
			`dry-run create of a Pod in {{.AdmissionNamespace}} refused after {{.Took}}: {{.Err}}`,
			`The namespace's admission rejected the probe Pod: compare its ResourceQuota, LimitRange and ` +
				`Pod Security labels with those of the syncer release's install.yaml (deploy/syncer/check.yaml), ` +
				`and list what runs there (kubectl -n {{.AdmissionNamespace}} get pods).`},
		keyAdmissionNoTerm: {
			`a dry-run Pod in {{.AdmissionNamespace}} came back without the term on {{.PoolLabelKey}} ` +
				`after {{.Took}}: {{if .TimedOut}}the call waited out the timeout of {{.Timeout}}: ` +
				`the webhook accepts connections but does not answer (a frozen replica, or a network path that ` +
				`drops the answers){{else}}the API server could not call the webhook or did not send it the Pod: ` +
				`a caBundle it does not trust, no endpoint, a NetworkPolicy, or a namespaceSelector that skips ` +
				`{{.AdmissionNamespace}}{{end}}`,
			`Every Kyma Pod is admitted so now. Read the other items for the cause; with all of them PASS, ` +
				`see "Webhook unreachable" in docs/troubleshooting.md (kube-apiserver log, NetworkPolicies, ` +
				`the path to the webhook's Service).`},
		keyAdmissionDisabled: {
			`a dry-run Pod in {{.AdmissionNamespace}} came back without the term on {{.PoolLabelKey}} ` +
				`after {{.Took}}, as the emergency disable has it ({{template "marker" .Disable}}): ` +
				`MutatingWebhookConfiguration {{.WebhookConfiguration}} is deleted, so the API server calls no webhook`,
			`Kyma Pods created until the restore get no term: end the disable as webhook-configuration says, ` +
				`then recreate them as placement says.`},
	}
}

// admissionTermPhrases word the terms a dry run came back with.
func admissionTermPhrases() map[finding]phrase {
	return map[finding]phrase{
		keyAdmissionTwoTerms: {
			`{{template "came" .}}: {{len .Terms}} preferred terms on {{.PoolLabelKey}}, where the webhook adds ` +
				`exactly one, {{template "want" .}} (pool {{template "from" .}}); ` +
				`more than one webhook mutates Kyma Pods`,
			`Find the other webhook that adds a term on {{.PoolLabelKey}} ` +
				`(kubectl get mutatingwebhookconfigurations), such as an old kim-snatch left behind, ` +
				`and remove it (docs/migration.md).`},
		keyAdmissionOtherTerm: {
			`{{template "came" .}}, not the webhook's term {{template "want" .}} (pool {{template "from" .}}): ` +
				`another webhook added it, or the webhook prefers another pool than the one it was configured with`,
			`{{template "find"}}, and remove it (docs/migration.md); if the pool is the one wanted, ` +
				`set the webhook's --worker-pool to it.`},
		keyAdmissionNoMWC: {
			`{{template "came" .}}, but MutatingWebhookConfiguration {{.WebhookConfiguration}} does not exist: ` +
				`another webhook added it`,
			`{{template "find"}}, and {{template "reinstall" "snatch-webhook"}}.`},
		keyAdmissionMWCDenied: {
			`{{template "came" .}}; whose term it is was not seen: these credentials may not ` +
				`get MutatingWebhookConfiguration {{.WebhookConfiguration}}: {{.Err}}`,
			`{{template "permitted" (print "get MutatingWebhookConfiguration " .WebhookConfiguration)}}`},
		keyAdmissionMWCFailed: {
			`{{template "came" .}}, but {{template "mwcAbsent" .}} to tell whose term it is`, ""},
		keyAdmissionNotCalled: {
			`{{template "came" .}}, but no entry of MutatingWebhookConfiguration {{.WebhookConfiguration}} calls ` +
				`Service {{.Namespace}}/{{.WebhookService}}: another webhook added it, such as the old kim-snatch ` +
				`before the migration switches the entry`,
			`Finish the migration (docs/migration.md), or {{template "reinstall" "snatch-webhook"}}.`},
		keyAdmissionTerm: {
			`a dry-run Pod in {{.AdmissionNamespace}} came back with the webhook's term ` +
				`{{template "term" (index .Terms 0)}} in {{.Took}} (pool {{template "from" .}})`, ""},
	}
}

// Keys of kyma-pool.
const (
	keyPoolMissing finding = "missing" // no Node in the pool
	keyPoolNoRoom  finding = "no-room" // no Node of it takes Pods
	keyPoolRoom    finding = "room"
)

func kymaPoolWords() itemWords {
	const partials = `{{define "pool"}}pool {{.Pool}} ({{template "from" .}}): {{.Members}} Nodes, ` +
		`{{.Usable}} Ready and schedulable{{if .Tainted}}; {{len .Tainted}} Ready but tainted, ` +
		`not room for Kyma Pods: {{names .Tainted}}{{end}}; {{if .RoomErr}}requests not read: {{.RoomErr}}` +
		`{{else}}CPU requested {{.CPURequested}} of {{.CPUAllocatable}} allocatable, ` +
		`memory {{.MemoryRequested}} of {{.MemoryAllocatable}}{{end}}{{end}}`
	return itemWords{facts: poolFacts{}, partials: partials, phrases: map[finding]phrase{
		keyPoolMissing: {
			`no Node carries {{.PoolLabelKey}}={{.Pool}} (the webhook's --worker-pool, {{template "from" .}}); ` +
				`pools present: {{if .Present}}{{names .Present}}{{else}}none (no Node has the label){{end}}`,
			`Set the webhook's --worker-pool to the Kyma pool's name (kubectl get nodes -L {{.PoolLabelKey}}), ` +
				`or add the Kyma worker pool to the Shoot. Until then the term matches no node.`},
		keyPoolNoRoom: {`{{template "pool" .}}`,
			`No Node of the Kyma pool takes Pods: check them with kubectl describe nodes ` +
				`-l {{.PoolLabelKey}}={{.Pool}} (NotReady, cordoned, or tainted NoSchedule or NoExecute).`},
		keyPoolRoom: {`{{template "pool" .}}`, ""},
	}}
}

func (p poolSize) String() string    { return fmt.Sprintf("%s (%d)", p.Name, p.Nodes) }
func (n taintedNode) String() string { return n.Name + " (" + n.Taint + ")" }

// Keys of placement.
const (
	keyPlacementAllOn finding = "all-on" // every Kyma Pod carries the term and runs on the pool
	keyPlacementOff   finding = "off"    // some lack the term or run off the pool
)

func placementWords() itemWords {
	const partials = `{{define "own"}}{{if .Own}}; {{.Own}} more choose their pool themselves{{end}}{{end}}` +
		`{{define "count"}}{{.Total}} Kyma Pods in {{.Namespaces}} namespaces{{end}}` +
		`{{define "cause"}}{{if eq .Kind "gone"}}unknown (the Node no longer exists){{else if eq .Kind "unread"}}` +
		`unknown (Nodes not readable){{else if eq .Kind "taint"}}taint {{.Taint}}{{else if eq .Kind "room"}}` +
		`pool has room now (it was full or missing when the Pod was scheduled){{else}}pool {{.Kind}}{{end}}{{end}}`
	return itemWords{facts: placementFacts{}, detail: placedPod{}, partials: partials, sortDetails: true,
		phrases: map[finding]phrase{
			keyPlacementAllOn: {
				`{{template "count" .}}; all carry the term, and all bound ones run on pool {{.Pool}}{{template "own" .}}`,
				""},
			keyPlacementOff: {
				`{{template "count" .}}: {{.Lack}} lack the term{{if .Lack}} ({{names .LackOwners}}){{end}}, ` +
					`{{.Off}} carry it but run off pool {{.Pool}}{{if .Off}} ({{causes .Causes}}){{end}}` +
					`{{template "own" .}}{{if .Unjudged}}; {{.Unjudged}} bound Pods with the term not judged, ` +
					`their Nodes could not be read: {{.UnjudgedErr}}{{end}}`,
				`{{if .Unjudged}}Run check with a kubeconfig that may get and list Nodes to include this item.` +
					`{{if or .Lack .Off}} {{end}}{{end}}{{if .Lack}}Once the webhook is healthy, recreate the Pods ` +
					`without the term through their owners: {{restart .LackOwners}}.{{if .Off}} {{end}}{{end}}` +
					`{{if .Off}}Make room in pool {{.Pool}} (see the causes), then recreate the Pods off the pool ` +
					`({{restart .OffOwners}}) or let the descheduler evict them: see "Spill-over" in ` +
					`docs/operations.md and deploy/examples/descheduler.{{end}}`},
			keyDetail: {
				`{{if .Lacks}}lacks the term: {{.Namespace}}/{{.Name}} (owner {{.Owner}}){{else}}off pool: ` +
					`{{.Namespace}}/{{.Name}} on node {{.Node}} ({{if eq .Cause.Kind "gone"}}Node gone{{else}}pool ` +
					`{{or .NodePool "none"}}{{end}}): {{template "cause" .Cause}}; owner {{.Owner}}{{end}}`, ""},
		}}
}

func (o podOwner) String() string { return o.kind + " " + o.namespace + "/" + o.name }

// restartCommand recreates the Pods of a Deployment or StatefulSet.
const restartCommand = "kubectl -n %s rollout restart %s/%s"

// restartHint names what recreates the Pods of owners, as a command where it can.
func restartHint(owners []podOwner) string {
	var cmds, others []string
	for _, o := range owners {
		if o.kind == "Deployment" || o.kind == "StatefulSet" {
			cmds = append(cmds, fmt.Sprintf(restartCommand, o.namespace, strings.ToLower(o.kind), o.name))
		} else {
			others = append(others, o.String())
		}
	}
	return listNames(append(cmds, others...))
}

// causeSummary counts the Pods off the pool by cause, in the order of its words.
func causeSummary(causes map[spill]int) string {
	words := placementWords()
	var summary []string
	for _, cause := range slices.Collect(maps.Keys(causes)) {
		summary = append(summary, say(words, `{{template "cause" .}}`, cause)+fmt.Sprintf(": %d", causes[cause]))
	}
	slices.Sort(summary)
	return strings.Join(summary, ", ")
}
