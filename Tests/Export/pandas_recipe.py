# Read a gyrogate CSV (MetaBase's columns, then gyrogate's) and plot the session.
import sys

import matplotlib
matplotlib.use("Agg")  # no display needed: the plot goes to a file
import pandas as pd

path, png = sys.argv[1], sys.argv[2]
df = pd.read_csv(path)
df["time"] = pd.to_datetime(df["epoch (ms)"], unit="ms", utc=True)
axes = ["x-axis (deg/s)", "y-axis (deg/s)", "z-axis (deg/s)"]
ax = df.plot(x="time", y=axes, figsize=(12, 4), title=df["session"].iloc[0])
for _, row in df[df["gap (samples)"].notna()].iterrows():  # a line where samples are missing
    ax.axvline(row["time"], color="red", alpha=0.4)
ax.figure.savefig(png)
print(f"{len(df)} samples, {int(df['backfilled'].sum())} backfilled, "
      f"{int(df['gap (samples)'].sum(skipna=True))} missing in {int(df['gap (samples)'].count())} gaps")
