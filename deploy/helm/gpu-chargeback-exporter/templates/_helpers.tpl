{{/*
Names and labels. The name label stays the chart's name whatever the release: the
ServiceMonitor's jobLabel turns it into job="gpu-chargeback-exporter", which the shipped rules
and dashboards select.
*/}}
{{- define "gce.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gce.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gce.labels" -}}
{{ include "gce.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "gce.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "gce.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "gce.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The config file: the value `config`, or the repository's example (files/config.yaml). */}}
{{- define "gce.config" -}}
{{- .Values.config | default (.Files.Get "files/config.yaml") -}}
{{- end -}}

{{/* The probes' scheme: HTTPS once the web config serves TLS. */}}
{{- define "gce.scheme" -}}
{{- if and .Values.webConfig.existingSecret .Values.webConfig.tls }}HTTPS{{ else }}HTTP{{ end -}}
{{- end -}}
