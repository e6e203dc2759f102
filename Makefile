# The two commands of the README, plus the single stages of the test suite.
.PHONY: test demo lint sanity units integration cores lab

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

lint sanity units integration cores lab:
	bash scripts/test.sh $@
