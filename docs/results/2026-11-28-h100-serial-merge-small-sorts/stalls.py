"""Warp-stall and instruction-mix summary of a Nsight Compute SASS source page (CSV): usage: python3 stalls.py PAGE.csv."""
import csv,sys,collections,re
f=sys.argv[1]
rows=list(csv.reader(open(f)))
hdr=rows[1]; data=rows[2:]
idx={h:i for i,h in enumerate(hdr)}
st=[h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
tot=collections.Counter()
ops=collections.Counter(); opsamp=collections.Counter()
def num(x):
    try: return float(x.replace(",",""))
    except: return 0
for r in data:
    for h in st: tot[h]+=num(r[idx[h]])
    op=r[idx["Source"]].split()[0] if r[idx["Source"]] else "?"
    if op.startswith("@"): op=r[idx["Source"]].split()[1]
    op=op.split(".")[0]
    ops[op]+=num(r[idx["Instructions Executed"]])
    opsamp[op]+=num(r[idx["Warp Stall Sampling (All Samples)"]])
s=sum(tot.values())
for h,v in tot.most_common(): 
    if v>0: print(f"{h:28s} {v/s*100:5.1f}%")
ti=sum(ops.values())
print("instr total", ti)
for o,v in ops.most_common(20): print(f"{o:8s} {v/ti*100:5.1f}%  samples {opsamp[o]/sum(opsamp.values())*100:5.1f}%")
