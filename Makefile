# The two commands of the README, plus the single stages of the test suite.
.PHONY: test demo lint sanity units integration cores lab lab-fleet lab-ceph lab-releases

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

lint sanity units integration cores lab:
	bash scripts/test.sh $@

# Two lab hosts at once (molecule scenario fleet, about 29 minutes): not part of `test`.
lab-fleet:
	bash scripts/test.sh lab_fleet

# A real Ceph cluster in the lab (molecule scenario ceph, about 25 minutes): not part of `test`.
lab-ceph:
	bash scripts/test.sh lab_ceph

# The lab's default scenario on Debian 11 and 13, one after the other: not part of `test`, which runs Debian 12.
lab-releases:
	bash scripts/test.sh lab_releases
