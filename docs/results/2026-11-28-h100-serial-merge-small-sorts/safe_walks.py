"""Share of a 1024 x 45 block sort's warps, level by level, whose every thread can walk VT merge steps without reaching a run's end (random u32 keys, on the host)."""
import random, bisect
NT, VT = 1024, 45
random.seed(1)
keys=[random.getrandbits(32) for _ in range(NT*VT)]
# thread-sorted runs
runs=[sorted(keys[t*VT:(t+1)*VT]) for t in range(NT)]
data=[k for r in runs for k in r]
coop=2
tot_fast=0; tot=0
while coop<=NT:
    run=VT*coop//2
    safe=[False]*NT
    for t in range(NT):
        a0=VT*(t & ~(coop-1)); A=data[a0:a0+run]; B=data[a0+run:a0+2*run]
        diag=VT*t-a0
        # merge path lower bound: number of A among first diag outputs
        lo=max(0,diag-len(B)); hi=min(diag,len(A))
        while lo<hi:
            m=(lo+hi)//2
            if not (B[diag-1-m] < A[m]): lo=m+1
            else: hi=m
        a=lo; b=diag-lo
        safe[t]= a+VT<=len(A) and b+VT<=len(B)
    warps_safe=sum(all(safe[w*32:(w+1)*32]) for w in range(NT//32))
    print(coop, sum(safe)/NT, warps_safe/(NT//32))
    tot_fast+=warps_safe; tot+=NT//32
    # merge pairs
    nd=[]
    for p0 in range(0,NT*VT,2*run): nd+=sorted(data[p0:p0+2*run])
    data=nd; coop*=2
print("fast warp-levels", tot_fast/tot)
