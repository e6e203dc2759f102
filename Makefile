# The two commands of the README, plus the single stages of the test suite.
.PHONY: test test-full demo lint sanity units integration cores rotation lab lab-fleet lab-ceph lab-releases

test:
	bash scripts/test.sh

# Everything, nothing reused: every pytest file, every lab scenario converged and verified anew.
test-full:
	CEPHOPS_REUSE=0 CEPHOPS_ROTATION=all bash scripts/test.sh

demo:
	bash scripts/demo.sh

lint sanity units integration cores rotation lab:
	bash scripts/test.sh $@

# The three scenarios `test` takes in turn (its stage rotation, one a run), each by hand.
# Two lab hosts at once (molecule scenario fleet, about 29 minutes).
lab-fleet:
	bash scripts/test.sh lab_fleet

# A real Ceph cluster in the lab (molecule scenario ceph, about 25 minutes).
lab-ceph:
	bash scripts/test.sh lab_ceph

# The lab's default scenario on Debian 11 and 13, one after the other (`lab` runs Debian 12).
lab-releases:
	bash scripts/test.sh lab_releases
