#!/bin/sh
# plm_rsh_agent of the realtrain mpi scenario (make_scenario.py): mpirun calls
# it as "mpi_agent.sh HOST COMMAND..." to start its daemon on HOST; HOST is a
# rank's address, and the command runs in that rank's network namespace
# (CTRT_NS_MAP: "ADDRESS=NAMESPACE ..."), through sh as ssh would run it.
host=$1
shift
for pair in $CTRT_NS_MAP; do
	case $pair in
	"$host="*) exec ip netns exec "${pair#*=}" sh -c "$*" ;;
	esac
done
echo "mpi_agent.sh: no namespace for $host" >&2
exit 1
