#!/bin/sh
# The fleet rules pass `promtool check rules` and their unit tests
# (`promtool test rules` on the series in commtap.rules.test.yml).
#   promtool_rules.sh RULES.yml RULES_TEST.yml
set -eu
if ! command -v promtool >/dev/null; then
	echo "SKIP: no promtool (Debian package prometheus)"
	exit 77
fi
promtool check rules "$1"
promtool test rules "$2"
