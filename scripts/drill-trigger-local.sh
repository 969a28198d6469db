#!/bin/sh
# A trigger for `vortex-realtime drill --trigger command:…` against a `vortex-realtime serve --admin` backend: each run
# posts one domain event for the drill's identity to POST /vortex/events. Staging has no such endpoint; write your own
# trigger that makes the real backend emit an event (see docs/rollback-runbook.md), with this one as the pattern.
#
#   vortex-realtime drill --appsync-endpoint http://127.0.0.1:8787/event --graphql-endpoint ws://127.0.0.1:8787/graphql \
#       --token "$TOKEN" --user u-7 --org o-7 --device-group g-7 \
#       --trigger 'command:scripts/drill-trigger-local.sh http://127.0.0.1:8787'
#
# It reads what the drill puts in its environment: VORTEX_DRILL_SEQUENCE, VORTEX_DRILL_KIND (the suggested kind),
# VORTEX_DRILL_TIMESTAMP, VORTEX_DRILL_USER, VORTEX_DRILL_ORG, VORTEX_DRILL_DEVICE_GROUP. Ids are local test ids
# (letters, digits, '-'); nothing is escaped for JSON. Needs curl.
set -eu

base=${1:?usage: drill-trigger-local.sh http://HOST:PORT}
sequence=${VORTEX_DRILL_SEQUENCE:-0}
kind=${VORTEX_DRILL_KIND:-roleChanged}
user=${VORTEX_DRILL_USER:?VORTEX_DRILL_USER is not set (run me from vortex-realtime drill)}
org=${VORTEX_DRILL_ORG:-}
group=${VORTEX_DRILL_DEVICE_GROUP:-}
stamp=${VORTEX_DRILL_TIMESTAMP:-}

# Kinds the identity cannot receive fall back to a role change.
case "$kind" in
devicePresence | deviceRecording | deviceFirmware | archiveState) [ -n "$org" ] && [ -n "$group" ] || kind=roleChanged ;;
licensePhase | plan | aiSettings) [ -n "$org" ] || kind=roleChanged ;;
esac

even=$((sequence % 2 == 0))
flag=false
[ "$even" -eq 1 ] && flag=true
device='"thingName":"drill-cam","mac":"00:1A:2B:3C:4D:5E","derivant":"VX-100"'
case "$kind" in
devicePresence) payload="{$device,\"online\":$flag}" ;;
deviceRecording) payload="{$device,\"recording\":$flag}" ;;
deviceFirmware) payload="{$device,\"fwUpdateState\":$((sequence % 16))}" ;;
archiveState) payload="{$device,\"status\":\"Ready\",\"videoLength\":12.5,\"videoSize\":$sequence,\"cloudSize\":1,\"hasH265\":$flag}" ;;
licensePhase) payload='{"licensePhase":"Valid"}' ;;
plan) payload="{\"isFreePlan\":$flag}" ;;
aiSettings) payload="{\"aiControlSetting\":{\"uuid\":\"ai-$sequence\",\"termsAgreement\":true,\"options\":{}}}" ;;
tokenRevoked) payload="{\"reason\":\"PASSWORD_CHANGED\",\"requestId\":\"drill-$sequence\"}" ;;
*) kind=roleChanged payload="{\"reason\":\"drill #$sequence\"}" ;;
esac

body="{\"kind\":\"$kind\",\"payload\":$payload"
case "$kind" in
roleChanged | tokenRevoked) body="$body,\"userId\":\"$user\"" ;;
*) body="$body,\"orgId\":\"$org\"" ;;
esac
case "$kind" in
devicePresence | deviceRecording | deviceFirmware | archiveState) body="$body,\"deviceGroupId\":\"$group\"" ;;
esac
[ -n "$stamp" ] && body="$body,\"timestamp\":\"$stamp\""
body="$body}"

curl -fsS -X POST "$base/vortex/events" -H 'content-type: application/json' -d "$body" >/dev/null
