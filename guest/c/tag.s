# The exception tag that setjmp/longjmp lowering throws and catches. LLVM
# references it but does not define it, so the guest does (payload: i32, the
# address of the {env, val} pair).
	.globl	__c_longjmp
	.tagtype	__c_longjmp i32
__c_longjmp:
